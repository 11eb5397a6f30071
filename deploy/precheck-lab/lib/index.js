// The course's pre-check in one click: a toolbar button on every notebook saves it, sends it to the
// hub's pre-check service with the page's own hub token, and shows the grader's answer in a panel of
// the right sidebar, beside the notebook. Every text from the service is shown as text (never as
// markup). It also rewords nbgrader's Validate dialog, which would claim that every test passed,
// adds the due date to it, and tells a student whose Submit came after the due date; that part works
// everywhere the course's JupyterLab runs, the button only under a hub (where the service lives).
import { Dialog, ICommandPalette, showDialog, ToolbarButton } from '@jupyterlab/apputils';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

const COMMAND = 'kit-precheck:run';
// nbgrader's Validate runs only the visible checks, yet says this; its text is fixed in nbgrader,
// so the line is reworded wherever its dialog shows it.
const VALIDATE_CLAIM = 'Success! Your notebook passes all the tests.';
const VALIDATE_HONEST =
  'Your notebook ran without errors and its visible checks passed. They test the page\'s own ' +
  'examples only: the grader also tests other inputs.';
const VALIDATE_NEXT_ON_HUB = ' Press Pre-check to have it run those too.';
const VALIDATE_NEXT_ELSEWHERE = ' It runs those once you submit.';
const WAIT_SECONDS = 30; // each poll waits this long on the service for the result
const GIVE_UP_MS = 10 * 60 * 1000;
const SIDEBAR_RANK = 50; // first of the right sidebar's tabs (JupyterLab's property inspector is 100)

function onHub() {
  // A server the hub spawned knows the hub's prefix; a JupyterLab started by hand does not.
  return Boolean(PageConfig.getOption('hubPrefix'));
}

function serviceUrl(path) {
  // The hub serves its own pages under hubPrefix ("/hub/"); services sit beside it.
  const hubPrefix = PageConfig.getOption('hubPrefix') || '/hub/';
  const base = hubPrefix.replace(/hub\/?$/, '');
  return URLExt.join(PageConfig.getOption('hubHost') || '', base, 'services/precheck/', path);
}

function nonce() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');
}

async function call(path, body) {
  const response = await fetch(serviceUrl(path), {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      Authorization: `token ${PageConfig.getToken()}`,
      'Content-Type': 'application/json'
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  let reply;
  try {
    reply = await response.json();
  } catch (error) {
    reply = { error: 'http', message: `the pre-check service answered ${response.status}` };
  }
  return reply;
}

class ResultPanel extends Widget {
  constructor() {
    super();
    this.id = 'kit-precheck-result';
    this.title.label = 'Pre-check';
    this.title.caption = 'What the course grader said about your saved notebook';
    this.addClass('kit-precheck-panel');
    // A screen reader reads each new answer out without the student moving to the panel.
    this.node.setAttribute('role', 'status');
    this.node.setAttribute('aria-live', 'polite');
    this.node.tabIndex = 0;
    this.last = new Map(); // notebook name -> its last answer from the grader, kept through a cooldown
  }

  line(text, className) {
    const element = document.createElement('div');
    element.textContent = text;
    if (className) {
      element.className = className;
    }
    this.node.appendChild(element);
    return element;
  }

  clear() {
    this.node.textContent = '';
  }

  waiting(name, check) {
    this.clear();
    const where = check && check.position ? ` (${check.position} ahead of you)` : '';
    this.line(`Checking ${name}${where}…`, 'kit-precheck-headline').dataset.state = 'waiting';
  }

  // Not named show: the shell calls the widget's own show() to open the sidebar it sits in.
  showResult(name, check) {
    this.clear();
    if (check.error) {
      this.refused(name, check);
      return;
    }
    const at = clockTime(Date.now());
    this.last.set(name, { check, at });
    this.answer(name, check, 'kit-precheck-headline');
    this.line('The grader ran its own tests; fix what failed, save, and check again after the cooldown.');
  }

  refused(name, check) {
    // A cooldown or a quota is a line above the last answer, which stays readable below it. The
    // service sends that answer with the refusal, so it survives a reload; this page's memory is a fallback.
    const sent = check.last && check.last.result ? check.last : undefined;
    const earlier = sent ? { check: { result: sent.result }, at: clockTime(sent.taken_at * 1000) } : this.last.get(name);
    const title = check.retry_after ? `Pre-check ${name} again ${inTime(check.retry_after)}` : `Pre-check of ${name} not run`;
    this.line(title, 'kit-precheck-headline').dataset.state = 'refused';
    this.line(check.message || check.error, 'kit-precheck-message');
    if (earlier) {
      this.line(`Your last pre-check of ${name}, at ${earlier.at}:`, 'kit-precheck-earlier');
      this.answer(name, earlier.check, 'kit-precheck-earlier-headline');
    }
  }

  answer(name, check, headlineClass) {
    const result = check.result;
    const graded = result.status === 'graded';
    const said = graded ? `${result.score} of ${result.max_score} points` : result.status;
    const headline = this.line(`Pre-check of ${name}: ${said}`, headlineClass);
    headline.dataset.state = 'done';
    if (result.due) {
      this.line(`This notebook is ${result.due}.`, 'kit-precheck-due');
    }
    if (!graded) {
      this.line(result.message, 'kit-precheck-message');
      return;
    }
    for (const cell of result.cells) {
      const block = document.createElement('div');
      block.className = 'kit-precheck-cell';
      block.dataset.cell = cell.cell;
      block.dataset.passed = String(cell.passed);
      const mark = cell.passed ? 'passed' : 'failed';
      const title = document.createElement('div');
      title.textContent = `${cell.cell}: ${cell.points} of ${cell.max_points} points, ${mark}`;
      block.appendChild(title);
      if (cell.diagnosis) {
        const diagnosis = document.createElement('div');
        diagnosis.className = 'kit-precheck-diagnosis';
        diagnosis.textContent = cell.diagnosis;
        block.appendChild(diagnosis);
      }
      this.node.appendChild(block);
    }
  }
}

function clockTime(milliseconds) {
  return new Date(milliseconds).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

function inTime(seconds) {
  // Rounded up: "in 40 s" below a minute, "in 4 min" below an hour, "in 9 h" for a day's quota.
  if (seconds >= 3600) {
    return `in ${Math.ceil(seconds / 3600)} h`;
  }
  return seconds >= 60 ? `in ${Math.ceil(seconds / 60)} min` : `in ${Math.ceil(seconds)} s`;
}

function reveal(app, results) {
  // The answer opens in the right sidebar, expanded: beside the notebook without taking half of its
  // width, so the notebook's toolbar keeps Pre-check and Validate in sight instead of folding them
  // into its overflow menu.
  if (!results.isAttached) {
    app.shell.add(results, 'right', { rank: SIDEBAR_RANK });
  }
  app.shell.activateById(results.id);
}

async function precheck(app, panel, results) {
  if (!panel) {
    return;
  }
  reveal(app, results);
  const name = panel.context.path.split('/').pop();
  results.waiting(name);
  await panel.context.save(); // the grader checks what is saved, so save first
  const content = panel.context.model.toJSON();
  let check = await call('api/checks', { notebook: name, content, nonce: nonce(), sent: Date.now() / 1000 });
  const giveUp = Date.now() + GIVE_UP_MS;
  while (!check.error && check.state !== 'done' && Date.now() < giveUp) {
    results.waiting(name, check);
    check = await call(`api/checks/${encodeURIComponent(check.id)}?wait=${WAIT_SECONDS}`);
  }
  if (!check.error && check.state !== 'done') {
    check = { error: 'waiting', message: 'The grader is busy: press Pre-check again in a few minutes.' };
  }
  results.showResult(name, check);
  reveal(app, results);
}

// The course's nbgrader settings put its words in the replies nbgrader's lab code reads: the due line in
// the validator's ("due"), a late submission's words in the list of submissions ("kit_late").
let dueOfLastValidation = '';

function rewordValidation(added) {
  for (const line of added.querySelectorAll('.validation-success p')) {
    if (line.textContent === VALIDATE_CLAIM) {
      line.textContent = VALIDATE_HONEST + (onHub() ? VALIDATE_NEXT_ON_HUB : VALIDATE_NEXT_ELSEWHERE);
      line.classList.add('kit-validate-honest');
    }
  }
  const messages = [added, ...added.querySelectorAll('#validation-message')].filter(
    node => node.id === 'validation-message'
  );
  for (const message of messages) {
    if (dueOfLastValidation) {
      showDue(message, `This notebook is ${dueOfLastValidation}.`);
    }
    dueOfLastValidation = '';
  }
}

function showDue(message, text) {
  // Beside the Ok button, where it stays in sight however far a long list of failed checks scrolls.
  const line = document.createElement('p');
  line.className = 'kit-validate-due';
  line.textContent = text;
  const footer = message.closest('.jp-Dialog-content')?.querySelector('.jp-Dialog-footer');
  if (footer) {
    footer.prepend(line);
  } else {
    message.appendChild(line);
  }
}

function noteValidation(reply) {
  dueOfLastValidation = '';
  if (reply.success) {
    const value = typeof reply.value === 'string' ? JSON.parse(reply.value) : reply.value;
    dueOfLastValidation = value && typeof value.due === 'string' ? value.due : '';
  }
}

function noteSubmission(reply) {
  // The submission just made is the newest of the student's; only a late one carries words.
  if (!reply.success || !Array.isArray(reply.value)) {
    return;
  }
  const submissions = reply.value.flatMap(assignment => assignment.submissions || []);
  const newest = submissions.reduce((last, one) => (!last || one.timestamp > last.timestamp ? one : last), null);
  if (newest && typeof newest.kit_late === 'string') {
    void showDialog({ title: 'Submitted after the due date', body: newest.kit_late, buttons: [Dialog.okButton()] });
  }
}

function watchReplies() {
  // nbgrader's lab code asks for the global fetch at each request, so its replies pass through here
  // (read from a copy, before nbgrader's code reads them); every other request is left as it was.
  const fetchOfThePage = window.fetch;
  window.fetch = async (input, init) => {
    const response = await fetchOfThePage.call(window, input, init);
    const path = new URL(typeof input === 'string' ? input : input.url, window.location.href).pathname;
    const note = path.endsWith('/assignments/validate')
      ? noteValidation
      : path.endsWith('/assignments/submit')
        ? noteSubmission
        : null;
    if (note) {
      try {
        note(await response.clone().json());
      } catch (error) {
        console.warn('kit-precheck: a reply of nbgrader was not read', error);
      }
    }
    return response;
  };
}

function watchValidation() {
  const observer = new MutationObserver(changes => {
    for (const change of changes) {
      for (const node of change.addedNodes) {
        if (node instanceof Element) {
          rewordValidation(node);
        }
      }
    }
  });
  observer.observe(document.body, { childList: true, subtree: true });
}

// Two plugins, so a hub without a pre-check service turns the button off and keeps the wording.
const validateWording = {
  id: 'kit-precheck:validate-wording',
  description:
    "Validate's dialog says that only the visible checks ran, not that every test passed, and when the " +
    'notebook is due; a Submit after the due date says so.',
  autoStart: true,
  activate: () => {
    watchReplies();
    watchValidation();
  }
};

const precheckButton = {
  id: 'kit-precheck:button',
  description: "A Pre-check button that has the course's grader check the saved notebook.",
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette],
  activate: (app, tracker, palette) => {
    if (!onHub()) {
      return; // no pre-check service away from the hub: a button there could only fail
    }
    const results = new ResultPanel();
    app.commands.addCommand(COMMAND, {
      label: 'Pre-check this notebook with the course grader',
      isEnabled: () => tracker.currentWidget !== null,
      execute: () => precheck(app, tracker.currentWidget, results)
    });
    if (palette) {
      palette.addItem({ command: COMMAND, category: 'Notebook Operations' });
    }
    tracker.widgetAdded.connect((_, panel) => {
      const button = new ToolbarButton({
        className: 'kit-precheck-button',
        label: 'Pre-check',
        tooltip: "Save, then have the course's grader check this notebook (its hidden tests too)",
        onClick: () => precheck(app, panel, results)
      });
      panel.toolbar.insertItem(10, 'kit-precheck', button);
    });
  }
};

export default [validateWording, precheckButton];

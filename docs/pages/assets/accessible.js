// A wide table scrolls sideways in its wrapper: the wrapper takes the keyboard's focus, so it can be
// scrolled without a mouse. The theme swaps pages in place, so this runs on each page it shows.
function focusableScrollers() {
  for (const wrapper of document.querySelectorAll(".md-typeset__scrollwrap")) {
    wrapper.setAttribute("tabindex", "0");
  }
}
if (typeof document$ !== "undefined") {
  document$.subscribe(focusableScrollers);
} else {
  document.addEventListener("DOMContentLoaded", focusableScrollers);
}

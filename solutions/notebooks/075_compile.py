# %% [markdown] compile_intro
# # 7.5 · torch.compile against an eager reference, and FlexAttention
#
# By default PyTorch runs *eagerly*: each operation executes the moment Python reaches it.
# `torch.compile` changes that only when you ask for it, in three stages. TorchDynamo reads your
# Python function and records the tensor operations it understands as a graph; AOTAutograd can
# derive the matching backward graph ahead of time; a backend (Inductor, unless you choose
# another) then produces the code that runs those graphs. Producing that code is an attempt at
# speed, not a guarantee of it.
#
# Three mechanisms decide what really gets compiled:
#
# * a construct Dynamo cannot record causes a *graph break*: the function is cut there and the
#   code between the recorded graphs runs eagerly; `fullgraph=True` demands one single graph and
#   raises an error instead of breaking;
# * *guards* re-check at every call the assumptions a graph was recorded under (shapes, dtypes,
#   whether grad mode is on, ...); when one fails, the function is compiled again;
# * shapes that change from call to call, and branches that depend on tensor values, need
#   handling that differs between PyTorch versions; compiling never makes it acceptable to take
#   a wrong branch without noticing.
#
# Treat a compiled function as a claim to check, not as a fact:
#
# * the eager function stays the **reference**: compare outputs *and* gradients with explicit
#   tolerances, because a different but equally valid order of floating-point operations may
#   change the last bits;
# * the first call includes compilation, so **time it on its own**; only the later calls show the
#   steady-state cost, and they should be measured on the mix of shapes the real workload sees.
#   A short run may never win back the compilation time, and heavy debugging hooks or logging
#   can change what Dynamo captures.
#
# **No speed-up is promised here.** Whether compilation pays off depends on the model, the shapes,
# the hardware and the run length; this notebook checks correctness and shows how to *measure*,
# on tiny functions where compilation will not pay off. For grading we use the `aot_eager`
# backend: it runs Dynamo and AOTAutograd (so forward and backward graphs are really traced) but
# executes the graphs eagerly, and compiles in well under a second. Inductor would take about
# 12 s per first call on these machines, so it is never used in a check; try it yourself if you
# are curious.
#
# **How to work.** Run the setup cell first. Each exercise has an answer cell whose body raises
# `NotImplementedError`: replace those lines with your code, run the cell, then run the check
# cell under it. The visible check tests what the exercise states on the page's own example; the
# grader runs further hidden tests, and a failed test names the
# misconception it recognised.

# %% compile_setup
import functools
import math
import time

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import flex_attention

import autograd_checks as checks
from autograd_checks import (
    COMMON_ERRORS, beside_student, call_answer, expect, expect_close, expect_tensor, in_kernel, quiet, seeded,
)

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# Compile one tiny function beside your code, forward and backward, so that Dynamo's one-time
# start-up cost is paid now rather than inside your first check.
in_kernel(checks.warm_up_compiler)

# %% [markdown] md_compare_compiled
# ## Checking a compiled function against eager
#
# Two functions that compute the same mathematics can disagree in the last bits: `(x * 0.1) * 3`
# and `x * 0.3` differ by about `1e-16` for many `x`, and a compiler is free to reorder or fuse
# operations in exactly this way. `torch.equal` would call such a pair different; the right
# question is whether they agree *within tolerances you state*, as `torch.allclose(a, b,
# rtol=..., atol=...)` answers (`|a - b| <= atol + rtol * |b|` elementwise).
#
# Matching outputs do not prove matching gradients: the backward pass is a separate computation
# (and for a `torch.autograd.Function`, separate code that you or a library wrote). Compare the
# gradients with respect to every input as well.
#
# ### Exercise 1 (4 points)
#
# Write `compare_compiled(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter)`:
#
# * `inputs` is a tuple of floating tensors (they may require grad); `fn` and `compiled_fn` take
#   them as positional arguments and return one tensor;
# * give each function its own fresh leaf copies of the inputs that require grad (in the inputs' own
#   dtype, with memory of their own and no history), backpropagate a cotangent of ones through each output, and compare the
#   outputs and the gradient of every input within the given tolerances, with the eager side as
#   the reference: `|compiled - eager| <= atol + rtol * |eager|` elementwise (the tolerance
#   `torch.allclose` applies to its second argument);
# * call `compiled_fn` exactly `1 + repeats` times: time the first call on its own, then time
#   each of the `repeats` later calls; read the time only by calling `clock()`, once just before
#   and once just after each call of `compiled_fn` and never otherwise, so a test can pass its
#   own clock;
# * return a dict with `"outputs_match"` and `"grads_match"` (bools), `"first_call_seconds"`
#   (float) and `"steady_seconds"` (float: the mean of the later calls; with `repeats=0` there
#   is nothing to average, and it is `float("nan")`).
#
# The grader passes its own pairs of callables (some compiled with `aot_eager`, some crafted to
# differ slightly, or only in their gradient) and its own clock.

# %% answer answer_compare_compiled
from solutions.reference.compile_check import compare_compiled

# %% test test_compare_compiled points=4 targets=compiled-matches-exactly,first-call-in-timing,outputs-imply-gradients,steady-time-summed,backward-overwrites-grad,float64-copies-for-comparison
REPORT_KEYS = {"outputs_match", "grads_match", "first_call_seconds", "steady_seconds"}

x = torch.linspace(-1.0, 1.0, 5, dtype=torch.float64)
report = call_answer(compare_compiled, torch.sin, torch.sin, (x,), 1e-7, 1e-9)
expect(
    isinstance(report, dict),
    f"compare_compiled should return a dict, got {type(report).__name__}"
    ": return a dict with the four keys the exercise names",
)
expect(
    REPORT_KEYS <= set(report),
    f"the report lacks the keys {sorted(REPORT_KEYS - set(report))}"
    ": add every key the exercise names",
)
expect(
    isinstance(report["outputs_match"], bool) and isinstance(report["grads_match"], bool),
    "outputs_match and grads_match should be Python bools: turn each comparison into a Python bool with bool(...)",
)
expect(
    isinstance(report["first_call_seconds"], float) and isinstance(report["steady_seconds"], float),
    "first_call_seconds and steady_seconds should be Python floats: turn each time into a Python float with float(...)",
)


def report_of(fn, compiled_fn, inputs, rtol, atol, **options):
    report = call_answer(compare_compiled, fn, compiled_fn, inputs, rtol, atol, **options)
    expect(
        isinstance(report, dict) and REPORT_KEYS <= set(report),
        f"compare_compiled must return a dict with the keys {sorted(REPORT_KEYS)}"
        ": return a dict with these keys",
    )
    return report


# Each function gets leaves of its own: two probes of the same a * a must not see each other's memory or .grad.
sides = []
original, eager_probe, compiled_probe = in_kernel(checks.probes_of_each_side, sides)
probed = report_of(eager_probe, compiled_probe, (original,), 1e-7, 1e-9, repeats=0)
memory = {side: {address for named, address in sides if named == side} for side in ("eager", "compiled")}
expect(
    not (memory["eager"] & memory["compiled"] and not probed["grads_match"]),
    "fn and compiled_fn received the same input tensor, so the second backward() added into the .grad the first "
    "one left and two identical functions got different gradients: give each function its own fresh leaf copies",
    "backward-overwrites-grad",
)
# The page's pair: the same mathematics, different rounding in the last bits.
report = report_of(checks.tenth_then_triple, checks.times_point_three, (x,), 1e-9, 1e-12)
expect(
    report["outputs_match"] and report["grads_match"],
    "(x * 0.1) * 3 and x * 0.3 differ only by rounding (about 1e-16), yet compare_compiled reported a mismatch "
    "at rtol=1e-9, atol=1e-12: compare within the tolerances, not bit for bit",
    "compiled-matches-exactly",
)
# The page: matching outputs do not prove matching gradients.
pair = (torch.linspace(0.5, 1.5, 3, dtype=torch.float64), torch.linspace(-1.0, 2.0, 3, dtype=torch.float64))
report = report_of(checks.scaled_sum, checks.scaled_sum_half_b_gradient, pair, 1e-9, 1e-12)
expect(
    report["outputs_match"] and not report["grads_match"],
    "a * b.sum() and a variant that halves the gradient of b agree on outputs only, but the report says "
    f"outputs_match={report['outputs_match']} and grads_match={report['grads_match']}: compare the gradient of "
    "every input too",
    "outputs-imply-gradients",
)
# Timing on a clock the check controls: the first call takes 5 s, each later one 0.25 s.
calls = []
clock, slow_first_call = in_kernel(checks.manual_clock, calls)
report = report_of(checks.twice, slow_first_call, (x,), 1e-7, 1e-9, repeats=2, clock=clock)
expect(
    len(calls) == 3,
    f"with repeats=2, compare_compiled should call compiled_fn 3 times, it called it {len(calls)} times"
    ": call it once, then once per repeat",
)
expect(
    math.isclose(report["first_call_seconds"], 5.0, abs_tol=1e-9),
    f"first_call_seconds is {report['first_call_seconds']!r}, but the first call alone took 5.0 s on the check's clock"
    ": time the first call on its own, from a clock() just before it to one just after it",
)
expect(
    not math.isclose(report["steady_seconds"], (5.0 + 2 * 0.25) / 3, abs_tol=1e-9),
    f"steady_seconds is {report['steady_seconds']!r}, the mean of all three calls, but each call after the first "
    "took 0.25 s: the first call (which includes compilation) must be timed apart, not averaged in"
    "; time the later calls apart and average only those",
    "first-call-in-timing",
)
expect(
    not math.isclose(report["steady_seconds"], 2 * 0.25, abs_tol=1e-9),
    f"steady_seconds is {report['steady_seconds']!r}, the total of the two later calls; it should be their mean "
    "(0.25 s here): divide the total by repeats",
    "steady-time-summed",
)
expect(
    math.isclose(report["steady_seconds"], 0.25, abs_tol=1e-9),
    f"steady_seconds is {report['steady_seconds']!r}, but each call after the first took 0.25 s on the check's clock"
    ": time each later call from a clock() just before it to one just after it, and average those",
)
# The inputs may be of any floating dtype: each function computes on copies in that dtype.
seen = []
recording = functools.partial(checks.noting_inputs, seen, checks.twice)
report = report_of(recording, recording, (x.to(torch.float16),), 1e-3, 1e-3)
received = sorted({str(t.dtype) for t in seen})
expect(
    received == ["torch.float16"],
    f"given float16 inputs, the functions received copies of dtype {received}: a copy in another dtype runs "
    "another computation than the one asked about; make each copy with t.detach().clone().requires_grad_()",
    "float64-copies-for-comparison",
)
expect(
    report["outputs_match"] and report["grads_match"],
    "a function compared with itself on float16 inputs does not match: compare with torch.allclose at the rtol "
    "and atol you are given",
)
print(
    "Checked on x = linspace(-1, 1, 5): a report with the four keys; each function gets leaves of its own; the page's (x * 0.1) * 3 and "
    "x * 0.3 match; outputs that match with gradients that do not are told apart; on the check's clock the first "
    "call is timed apart and the later ones averaged; float16 inputs reach the functions as float16. The grader also "
    "tests other pairs, tolerances, repeats and dtypes."
)

### BEGIN HIDDEN TESTS


t = torch.randn(6, dtype=torch.float64, generator=seeded(50))

# First, whether the two functions were given inputs of their own: if not, every later gradient is doubled.
sides = []
original, eager_probe, compiled_probe = in_kernel(checks.probes_of_each_side, sides)
probed = report_of(eager_probe, compiled_probe, (original,), 1e-7, 1e-9, repeats=0)
memory = {side: {address for named, address in sides if named == side} for side in ("eager", "compiled")}
shared = bool(memory["eager"] & memory["compiled"])
# The two probes compute the same a * a: gradients that disagree were added into the .grad the other side left.
expect(
    not (shared and not probed["grads_match"]),
    "fn and compiled_fn received the same input tensor, so the second backward() added into the .grad the first "
    "one left and two identical functions got different gradients: give each function its own fresh leaf copies",
    "backward-overwrites-grad",
)


# Same mathematics, different rounding: the pair disagrees in the last bits, outputs and gradients.
report = report_of(checks.tenth_then_triple, checks.times_point_three, (t,), 1e-9, 1e-12)
expect(
    not report["outputs_match"] or report["grads_match"],
    "(x * 0.1) * 3 and x * 0.3 have matching outputs and gradients that differ only by rounding, yet compare_compiled "
    "reported different gradients. If both functions ran backward() on the same leaves, the second backward() added "
    "into the .grad the first one left, doubling it: give each function its own fresh leaves (or use "
    "torch.autograd.grad, which does not accumulate)",
    "backward-overwrites-grad",
)
expect(
    report["outputs_match"] and report["grads_match"],
    "(x * 0.1) * 3 and x * 0.3 differ only by rounding (about 1e-16), yet compare_compiled reported a mismatch "
    "at rtol=1e-9, atol=1e-12: compare within the tolerances, not bit for bit",
    "compiled-matches-exactly",
)
report = report_of(torch.tanh, checks.tanh_plus_tiny, (t,), 1e-7, 1e-9)
expect(
    report["outputs_match"],
    "outputs that differ by 1e-12 must match at atol=1e-9, but compare_compiled reported a mismatch"
    "; compare with torch.allclose(compiled, eager, rtol=rtol, atol=atol)",
    "compiled-matches-exactly",
)

# The tolerances are the caller's: a relative gap of 1e-6 passes rtol=1e-5 and fails rtol=1e-8,
# and an absolute gap of 1e-6 passes atol=1e-5 and fails atol=1e-7 (torch.allclose's own defaults would decide otherwise).
loose = report_of(checks.twice, checks.twice_stretched, (t,), 1e-5, 0.0)
tight = report_of(checks.twice, checks.twice_stretched, (t,), 1e-8, 0.0)
expect(
    loose["outputs_match"] and loose["grads_match"],
    "with rtol=1e-5 a relative gap of 1e-6 must count as a match"
    ": compare with torch.allclose(compiled, eager, rtol=rtol, atol=atol)",
)
expect(
    not tight["outputs_match"] and not tight["grads_match"],
    "with rtol=1e-8 and atol=0 a relative gap of 1e-6 must count as a mismatch: use the rtol and atol you are given",
)

loose = report_of(checks.twice, checks.twice_shifted, (t,), 0.0, 1e-5)
tight = report_of(checks.twice, checks.twice_shifted, (t,), 0.0, 1e-7)
expect(loose["outputs_match"], "with atol=1e-5 and rtol=0 an absolute gap of 1e-6 must count as a match: use the atol you are given")
expect(not tight["outputs_match"], "with atol=1e-7 and rtol=0 an absolute gap of 1e-6 must count as a mismatch: use the atol you are given")

# The eager side is the reference: a compiled value 1.105 times the eager one is off by 0.105 * |eager|,
# beyond rtol=0.1 of the eager value but within rtol=0.1 of the compiled one.
positive = torch.rand(5, dtype=torch.float64, generator=seeded(54)) + 1
report = report_of(checks.times_one, checks.times_1_105, (positive,), 0.1, 0.0)
expect(
    not report["outputs_match"] and not report["grads_match"],
    "a compiled result 1.105 times the eager one is off by more than rtol=0.1 of the eager value, yet the report "
    "says it matches: the tolerance is relative to the eager side, torch.allclose(compiled, eager, ...)"
    "; compare with torch.allclose(compiled, eager, rtol=rtol, atol=atol), in that order",
)



# Right forward, wrong backward, compiled with aot_eager: only the gradients reveal it.
compiled_wrong_cube = in_kernel(checks.compiled_wrong_cube)  # a**3 with a wrong backward, compiled beside your code
u = torch.randn(4, dtype=torch.float64, generator=seeded(51))
report = report_of(checks.cubed, compiled_wrong_cube, (u,), 1e-9, 1e-12)
expect(
    report["outputs_match"],
    "a**3 and its compiled variant agree on outputs, but outputs_match is False"
    ": compare the two outputs with torch.allclose at the rtol and atol you are given",
)
expect(
    not report["grads_match"],
    "the compiled variant has a wrong backward (2a instead of 3a**2) but grads_match is True: "
    "backpropagate through both functions and compare the input gradients too",
    "outputs-imply-gradients",
)


# Two inputs, the same function written in another order: outputs and both gradients agree.
a = torch.randn(3, dtype=torch.float64, generator=seeded(52))
b = torch.randn(3, dtype=torch.float64, generator=seeded(53))
report = report_of(checks.sine_mix, checks.sine_mix_reordered, (a, b), 1e-9, 1e-12)
expect(
    report["outputs_match"] and report["grads_match"],
    "two orderings of the same two-input function agree, but the report says otherwise"
    ": give each function fresh leaf copies of the inputs and compare outputs and gradients with torch.allclose",
)


# Two inputs where only the gradient of the second one differs.
report = report_of(checks.scaled_sum, checks.scaled_sum_half_b_gradient, (a, b), 1e-9, 1e-12)
expect(
    report["outputs_match"],
    "a * b.sum() and its variant agree on outputs, but outputs_match is False"
    ": compare the two outputs with torch.allclose at the rtol and atol you are given",
)
expect(
    not report["grads_match"],
    "the variant halves the gradient of the second input only, but grads_match is True: compare the gradient of every input",
    "outputs-imply-gradients",
)


# Every floating dtype the text allows, at tolerances that suit it. Scaled up by 1e37 and back, a value
# overflows to inf in float16 (and beyond 34 in bfloat16 and float32), never in float64: only a comparison
# in the inputs' own dtype sees the compiled side differ (on the compiled side, where |inf - eager| exceeds
# atol + rtol * |eager| as the text writes it, not only as torch.allclose reads it).
for dtype, rtol, atol in ((torch.float16, 1e-2, 1e-3), (torch.bfloat16, 1e-2, 1e-3), (torch.float32, 1e-5, 1e-7)):
    u = (torch.linspace(-60.0, 60.0, 6, dtype=torch.float64) + 0.5).to(dtype)
    seen = []
    recording = functools.partial(checks.noting_inputs, seen, checks.twice)
    report = report_of(recording, recording, (u,), rtol, atol)
    received = sorted({str(t.dtype) for t in seen})
    expect(
        received == [str(dtype)],
        f"given {dtype} inputs, the functions received copies of dtype {received}: a copy in another dtype runs "
        "another computation than the one asked about; make each copy with t.detach().clone().requires_grad_()",
        "float64-copies-for-comparison",
    )
    expect(
        report["outputs_match"] and report["grads_match"],
        f"a function compared with itself on {dtype} inputs does not match at rtol={rtol}, atol={atol}: compare "
        "with torch.allclose at the rtol and atol you are given",
    )
    report = report_of(checks.times_one, checks.overflowing_round_trip, (u,), rtol, atol)
    expect(
        not report["outputs_match"],
        f"on {dtype} inputs, the compiled variant (u * 1e37) / 1e37 overflows to inf where u * 1.0 does not, yet "
        "outputs_match is True: compute both functions on copies in the inputs' own dtype, as the caller will run them",
        "float64-copies-for-comparison",
    )


# The copies a function receives: leaves of their own, also when the caller's input requires grad.
seen = []
original, probe = in_kernel(checks.probed_inputs, seen)
report_of(probe, probe, (original,), 1e-7, 1e-9, repeats=1)
expect(
    len(seen) > 0,
    "compare_compiled never called the functions it was given"
    ": call fn and compiled_fn on fresh leaf copies of the inputs",
)
expect(
    all(leaf and tracked for leaf, tracked, _ in seen),
    "a function received an input that is not a leaf requiring grad: clone() of an input that requires grad "
    "keeps its history, so detach it as well before requires_grad_()",
)
expect(
    all(own for _, _, own in seen),
    "a function received an input that shares memory with the caller's tensor: detach() alone keeps the "
    "caller's memory; give each function a copy of its own",
)
expect(
    not shared,
    "fn and compiled_fn received the same input tensor: give each function its own fresh leaf copies of the inputs "
    "(detach().clone().requires_grad_()), so neither can see what the other did to it",
)


# Timing on a clock the test controls: the first call stands for compilation (5 s), later calls take 0.25 s.
calls = []
clock, slow_first_call = in_kernel(checks.manual_clock, calls)
report = report_of(checks.twice, slow_first_call, (t,), 1e-7, 1e-9, repeats=4, clock=clock)
expect(
    len(calls) == 5,
    f"with repeats=4, compare_compiled should call compiled_fn 5 times, it called it {len(calls)} times"
    ": call it once, then once per repeat",
)
expect(
    math.isclose(report["first_call_seconds"], 5.0, abs_tol=1e-9),
    f"first_call_seconds is {report['first_call_seconds']!r}, but the first call alone took 5.0 s on the test clock"
    ": time the first call on its own, from a clock() just before it to one just after it",
)
expect(
    not math.isclose(report["steady_seconds"], (5.0 + 4 * 0.25) / 5, abs_tol=1e-9),
    f"steady_seconds is {report['steady_seconds']!r}, the mean of all five calls, but each call after the first "
    "took 0.25 s: the first call (which includes compilation) must be timed apart, not averaged in"
    "; time the later calls apart and average only those",
    "first-call-in-timing",
)
expect(
    not math.isclose(report["steady_seconds"], 4 * 0.25, abs_tol=1e-9),
    f"steady_seconds is {report['steady_seconds']!r}, the total of the four later calls; it should be their mean, "
    "the time of one steady-state call (0.25 s here): divide the total by repeats",
    "steady-time-summed",
)
expect(
    math.isclose(report["steady_seconds"], 0.25, abs_tol=1e-9),
    f"steady_seconds is {report['steady_seconds']!r}, but each call after the first took 0.25 s on the test clock"
    ": time each later call from a clock() just before it to one just after it, and average those",
)

# The stated default, repeats=3: four calls, and the clock read just before and after each one.
calls, readings = [], []
clock, slow_first_call = in_kernel(checks.manual_clock, calls, readings)
report = report_of(checks.twice, slow_first_call, (t,), 1e-7, 1e-9, clock=clock)
expect(
    len(calls) == 4,
    f"with the default repeats=3, compare_compiled should call compiled_fn 4 times, it called it {len(calls)} times"
    ": call it once, then once per repeat (repeats=3 when none is given)",
)
expect(
    len(readings) == 8,
    f"compare_compiled read the clock {len(readings)} times for 4 calls; read it exactly twice per call, just before and just after",
)
expect(
    math.isclose(report["steady_seconds"], 0.25, abs_tol=1e-9),
    f"with the default repeats, steady_seconds is {report['steady_seconds']!r} instead of 0.25"
    ": average the later calls' times, with repeats=3 when none is given",
)

# repeats=0: the first call only, and no later call to average.
calls = []
clock, slow_first_call = in_kernel(checks.manual_clock, calls)
report = report_of(checks.twice, slow_first_call, (t,), 1e-7, 1e-9, repeats=0, clock=clock)
expect(
    len(calls) == 1,
    f"with repeats=0, compare_compiled should call compiled_fn once, it called it {len(calls)} times"
    ": call it once and no more",
)
expect(
    math.isclose(report["first_call_seconds"], 5.0, abs_tol=1e-9),
    f"with repeats=0, first_call_seconds is {report['first_call_seconds']!r} instead of 5.0"
    ": time the first call on its own",
)
expect(
    isinstance(report["steady_seconds"], float) and math.isnan(report["steady_seconds"]),
    f"with repeats=0 there is no later call to average, so steady_seconds should be float('nan'), got {report['steady_seconds']!r}"
    ": return float('nan') when there is nothing to average",
)
### END HIDDEN TESTS

# %% [markdown] md_check_against_eager
# ## Compiling for a check
#
# `torch.compile(fn, backend="aot_eager")` returns a new callable; nothing is compiled until its
# first call, which is why that call is slow. Passing the comparison function in as an argument
# keeps this step testable on its own.
#
# ### Exercise 2 (2 points)
#
# Write `check_against_eager(fn, inputs, rtol, atol, compare=None)`: compile `fn` with
# `torch.compile` and the `"aot_eager"` backend, then return
# `compare(fn, compiled_fn, inputs, rtol, atol)`, where `compare` defaults to your
# `compare_compiled`. The grader passes its own `compare`, so this exercise does not depend on
# exercise 1; it also watches which backend you ask for.

# %% answer answer_check_against_eager
from solutions.reference.compile_check import check_against_eager

# %% test test_check_against_eager points=2 targets=compile-default-backend-cheap
x = torch.linspace(-1.0, 1.0, 5, dtype=torch.float64)


def judge_backends(backends):
    for backend in backends:
        expect(
            backend != "inductor",
            "torch.compile used Inductor (the backend you get when you name none), which spends about 12 s compiling "
            "on the first call here: for a check use backend='aot_eager'; pass backend='aot_eager' to torch.compile",
            "compile-default-backend-cheap",
        )
        expect(
            backend == "aot_eager",
            f"torch.compile was asked for backend {backend!r}: for this check use backend='aot_eager', which traces the "
            "forward and the backward graph (so the check covers what compiling does to both) and compiles in well "
            "under a second; pass backend='aot_eager' to torch.compile",
        )


with checks.watching_compile() as backends:
    result = call_answer(check_against_eager, torch.sin, (x,), 1e-7, 1e-9, compare=checks.fixed_report)
judge_backends(backends)
expect(
    backends,
    "check_against_eager never called torch.compile"
    ": call torch.compile(fn, backend='aot_eager') and hand the result to compare",
)
expect(
    result == "the comparison report",
    "check_against_eager should return what compare returns"
    ": return compare's result as it is",
)
print(
    "Checked on torch.sin with a stand-in compare: torch.compile asked for the aot_eager backend, and compare's "
    "result returned. The grader also checks what compare receives and what the compiled function computes."
)

### BEGIN HIDDEN TESTS
recorded = []
recording_compare = functools.partial(checks.noting_compare, recorded)
softplus_mix = in_kernel(checks.itself, checks.softplus_mix)  # the eager function as it stands beside your code
a = torch.randn(5, dtype=torch.float64, generator=seeded(60))
b = torch.randn(5, dtype=torch.float64, generator=seeded(61))
with checks.watching_compile() as backends:
    try:
        result = call_answer(check_against_eager, softplus_mix, (a, b), 1e-6, 1e-8, compare=recording_compare)
    except Exception:
        judge_backends(backends)  # a backend asked for before the failure is named first
        raise
judge_backends(backends)
expect(
    backends,
    "check_against_eager never called torch.compile"
    ": call torch.compile(fn, backend='aot_eager') and hand the result to compare",
)
expect(
    len(recorded) == 1,
    f"check_against_eager should call compare once, it called it {len(recorded)} times"
    ": call compare once",
)
call = recorded[0]
expect(call["fn"] is softplus_mix, "compare should receive the eager function itself as fn")
expect(call["compiled_fn"] is not softplus_mix, "compare received the eager function as compiled_fn")
expect(
    len(call["inputs"]) == 2 and call["inputs"][0] is a and call["inputs"][1] is b,
    "compare should receive the inputs you were given",
)
expect(call["rtol"] == 1e-6 and call["atol"] == 1e-8, "compare should receive the rtol and atol you were given")
expect(
    result == "the comparison report",
    "check_against_eager should return what compare returns"
    ": return compare's result as it is",
)

leaves = [a.clone().requires_grad_(), b.clone().requires_grad_()]
out = call_answer(call["compiled_fn"], *leaves)
expect_tensor(out, "the compiled function's output", shape=(5,))
with quiet():  # the output's graph lives beside your code: its gradients are taken there
    grad_a, grad_b = in_kernel(checks.gradients_of_sum, out, leaves)
expect_close(
    out,
    F.softplus(a) * b + torch.sin(a),
    "the compiled function does not compute fn"
    ": compile fn itself with torch.compile(fn, backend='aot_eager')",
    rtol=1e-10,
    atol=1e-12,
)
expect_close(
    grad_a,
    torch.sigmoid(a) * b + torch.cos(a),
    "the compiled function's gradient for a is wrong"
    ": compile fn itself with torch.compile(fn, backend='aot_eager')",
    rtol=1e-10,
    atol=1e-12,
)
expect_close(
    grad_b,
    F.softplus(a),
    "the compiled function's gradient for b is wrong"
    ": compile fn itself with torch.compile(fn, backend='aot_eager')",
    rtol=1e-10,
    atol=1e-12,
)
### END HIDDEN TESTS

# %% [markdown] md_causal_score_mod
# ## FlexAttention: modifying scores
#
# Attention compares each query with every key, `scores = q @ k^T / sqrt(E)`, turns each row of
# scores into weights with a softmax, and averages the values with them. Many variants change
# only the scores before the softmax: a causal model forbids looking at later positions, ALiBi
# adds a bias that depends on the distance between positions, and so on.
# `torch.nn.attention.flex_attention.flex_attention(q, k, v, score_mod=...)` takes such a change
# as a small function `score_mod(score, b, h, q_idx, kv_idx)` that returns the new score for
# batch `b`, head `h`, query position `q_idx` and key position `kv_idx`. FlexAttention does not
# call it once per entry: it calls it on whole tensors of indices, so write it with tensor
# operations (`torch.where`), not with a Python `if`.
#
# To forbid a key, give it the score `-inf`: `exp(-inf) = 0`, so it gets exactly zero weight and
# the other weights still sum to one. A score of `0` does not forbid anything (`exp(0) = 1`).
#
# **Score modification versus a block mask.** A `score_mod` does arithmetic on scores: it is
# applied to every score that is computed, so it can add a bias as well as forbid a key, but a
# key it forbids with `-inf` was still computed first. A *block mask* expresses sparsity instead:
# `create_block_mask(mask_mod, ...)` takes a `mask_mod(b, h, q_idx, kv_idx)` that only answers
# *may this query see this key?* (a boolean, no arithmetic), and records per tile of the score
# matrix whether all, some or none of it is allowed; passed as `block_mask=`, it lets FlexAttention
# skip the tiles where nothing is allowed and apply the mask only inside partly allowed tiles.
# A causal pattern can be written either way; only the block mask can save work, and only the
# score_mod can change the values of the scores that remain. The two are distinct and are often
# combined.
#
# **On this machine.** FlexAttention is a prototype API whose details move between releases. On
# CPU it runs the forward pass only: inputs that require grad raise `NotImplementedError`. Called
# without `torch.compile`, it warns that it falls back to an unfused implementation that builds the
# whole score matrix; the checks keep that warning off the output. Neither the fact that it runs nor
# any example here says anything about speed (FlashAttention-like speed is not something this CPU
# runtime promises). The cell below shows both limits.

# %% demo compile_demo_flex_limits
def keep_score(score, b, h, q_idx, kv_idx):
    return score


probe = torch.randn(1, 1, 4, 8, dtype=torch.float64, generator=seeded(1))
with quiet() as caught:
    flex_attention(probe, probe, probe, score_mod=keep_score)
print("warnings caught on an uncompiled call:", len(caught))
try:
    with quiet():
        flex_attention(probe.clone().requires_grad_(), probe, probe, score_mod=keep_score)
except NotImplementedError:
    print("inputs that require grad: NotImplementedError (no backward on CPU)")

# %% [markdown] md_causal_score_mod_exercise
# ### Exercise 3 (3 points)
#
# Write `causal_score_mod(score, b, h, q_idx, kv_idx)`: keep `score` where the key is not after
# the query (`kv_idx <= q_idx`) and return exactly `-inf` elsewhere (a large negative number is
# not the same score). All arguments are tensors; return a tensor. The grader calls it directly on grids of indices and through `flex_attention`, and
# compares the attention with an explicit causal softmax.

# %% answer answer_causal_score_mod
from solutions.reference.compile_check import causal_score_mod

# %% test test_causal_score_mod points=3 targets=zero-score-masks-key,python-branch-in-score-mod,large-negative-masks-key
SCORE_MOD_ERRORS = (
    (
        "is ambiguous",
        "python-branch-in-score-mod",
        "a Python `if` on the index tensors fails: score_mod receives whole tensors of indices, choose with torch.where",
    ),
) + COMMON_ERRORS

# FlexAttention passes whole tensors of indices; here a 3 x 3 grid made by broadcasting.
def check_score_grid(scores):
    """causal_score_mod on a square grid of scores: allowed scores kept, every later key exactly -inf."""
    length = len(scores)
    rows = torch.arange(length).view(length, 1)
    cols = torch.arange(length).view(1, length)
    zero = torch.tensor(0)
    modified = call_answer(causal_score_mod, scores, zero, zero, rows, cols, known_errors=SCORE_MOD_ERRORS)
    expect_tensor(modified, f"causal_score_mod on a {length} x {length} grid of scores", shape=(length, length))
    allowed = rows >= cols
    expect(
        torch.equal(modified[allowed], scores[allowed]),
        "causal_score_mod changed the score of a key at or before its query"
        ": return the score itself where the key is at or before its query (kv_idx <= q_idx)",
    )
    weights = torch.softmax(modified.to(torch.float64), dim=-1)
    expect(
        bool((weights[~allowed] == 0).all()),
        "keys after their query still get softmax weight: a score of 0 (or a score multiplied by the mask) "
        "still counts, since exp(0) = 1; return -inf for them",
        "zero-score-masks-key",
    )
    finite = modified[~allowed][modified[~allowed] != -math.inf]
    expect(
        finite.numel() == 0,
        f"the scores of keys after their query should be exactly -inf, got {finite.tolist()[:3]}: "
        "a large negative number only vanishes under softmax while the other scores stay far above it"
        "; return -inf for them, as float('-inf')",
        "large-negative-masks-key",
    )


check_score_grid(torch.ones(3, 3))
print(
    "Checked on a 3 x 3 grid of ones: the scores of keys at or before their query are kept, the others are exactly "
    "-inf. The grader also tests other grids and causal_score_mod inside flex_attention."
)

### BEGIN HIDDEN TESTS
check_score_grid(torch.randn(6, 6, dtype=torch.float64, generator=seeded(70)))

for seed, (batch, heads, length, dim) in ((71, (1, 2, 5, 4)), (72, (2, 1, 7, 8))):
    generator = seeded(seed)
    q, k, v = (torch.randn(batch, heads, length, dim, dtype=torch.float64, generator=generator) for _ in range(3))
    out = call_answer(flex_attention, q, k, v, score_mod=causal_score_mod, known_errors=SCORE_MOD_ERRORS)
    future = torch.ones(length, length, dtype=torch.bool).triu(1)
    explicit = torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(dim)).masked_fill(future, -math.inf), dim=-1) @ v
    expect_close(
        out, explicit,
        f"flex_attention with causal_score_mod on shape {(batch, heads, length, dim)} differs from an explicit causal softmax"
        ": return the score where kv_idx <= q_idx and -inf elsewhere, with torch.where",
        rtol=1e-10, atol=1e-12,
    )
### END HIDDEN TESTS

# %% [markdown] md_masked_attention
# ## The explicit reference
#
# FlexAttention is checked against attention written out by hand, just as compiled code is
# checked against eager code. Masking belongs *before* the softmax: a forbidden score becomes
# `-inf`, and the softmax then spreads all the weight over the allowed keys. Multiplying the
# weights by the mask *after* the softmax removes the forbidden weight but leaves the rest
# summing to less than one.
#
# ### Exercise 4 (3 points)
#
# Write `masked_attention(q, k, v, keep)`: `q` has shape `(..., L, E)`, `k` `(..., S, E)`, `v`
# `(..., S, D)` and `keep` is a boolean `(L, S)` tensor, `True` where query `i` may look at key
# `j` (every query keeps at least one key). Return `softmax(masked scores) @ v` of shape
# `(..., L, D)`, with `scores = q @ k^T / sqrt(E)`. A forbidden key must get a weight of exactly
# zero however large or small the allowed scores are, also when they are in the billions. The grader compares your result with
# PyTorch's `scaled_dot_product_attention` and probes the weights you produce.

# %% answer answer_masked_attention
from solutions.reference.compile_check import masked_attention

# %% test test_masked_attention points=3 targets=zero-score-masks-key,mask-after-softmax,attention-mask-inverted,large-negative-masks-key
def check_masked_attention(seed, lead, length, keys, dim, width):
    """Seeded q, k, v and a random keep: the weights (v = identity) and the output against PyTorch's attention."""
    generator = seeded(seed)
    q = torch.randn(*lead, length, dim, dtype=torch.float64, generator=generator)
    k = torch.randn(*lead, keys, dim, dtype=torch.float64, generator=generator)
    v = torch.randn(*lead, keys, width, dtype=torch.float64, generator=generator)
    keep = torch.rand(length, keys, generator=generator) < 0.5
    keep[torch.arange(length), torch.randint(keys, (length,), generator=generator)] = True
    shown = f"masked_attention with q of shape {tuple(q.shape)}"

    # With v the identity matrix, the output is the matrix of attention weights itself.
    identity = torch.eye(keys, dtype=torch.float64).expand(*lead, keys, keys)
    weights = call_answer(masked_attention, q, k, identity, keep)
    expect_tensor(weights, shown, shape=(*lead, length, keys))
    kept = weights.detach()[..., keep]
    expect(
        not (bool(((kept == 0) | kept.isnan()).all()) and bool((weights.detach()[..., ~keep] > 0).any())),
        f"{shown}: the keys that keep allows got no weight and the forbidden ones got all of it. keep is True where "
        "query i may look at key j, so the scores to replace with -inf are those where keep is False (~keep)",
        "attention-mask-inverted",
    )
    expect(
        bool((weights.detach()[..., ~keep] == 0).all()),
        f"{shown}: masked keys still receive weight; a score of 0 still counts after the softmax (exp(0) = 1): use -inf",
        "zero-score-masks-key",
    )
    # Masking after the softmax leaves the unmasked softmax's weights on the allowed keys.
    masked_late = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dim), dim=-1) * keep
    expect(
        not torch.allclose(weights.detach(), masked_late, rtol=1e-9, atol=1e-12),
        f"{shown}: the weights of a query do not sum to one; the mask was applied after the softmax, not to the scores"
        "; set the forbidden scores to -inf before the softmax",
        "mask-after-softmax",
    )
    expect_close(
        weights.sum(-1), torch.ones(*lead, length, dtype=torch.float64),
        f"{shown}: the weights of a query do not sum to one"
        "; take the softmax over the keys (the last axis, dim=-1) of the masked scores",
        rtol=1e-12, atol=1e-12,
    )
    out = call_answer(masked_attention, q, k, v, keep)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    expect_close(
        out,
        expected,
        f"{shown} differs from scaled_dot_product_attention"
        ": set the scores where keep is False to -inf before the softmax, then multiply the weights by v",
        rtol=1e-10,
        atol=1e-12,
    )


def check_huge_scores(seed):
    """Allowed scores around -1e10, far below -1e9: only -inf (or the lowest float) still forbids a key."""
    generator = seeded(seed)
    q = 1e5 * (torch.rand(2, 4, 3, dtype=torch.float64, generator=generator) + 1)
    k = -1e5 * (torch.rand(2, 5, 3, dtype=torch.float64, generator=generator) + 1)
    keep = torch.tensor([[1, 0, 0, 1, 0], [0, 1, 1, 0, 0], [1, 1, 0, 0, 1], [0, 0, 0, 1, 1]], dtype=torch.bool)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(3)).masked_fill(~keep, -math.inf)
    weights = call_answer(masked_attention, q, k, torch.eye(5, dtype=torch.float64).expand(2, 5, 5), keep)
    expect_tensor(weights, "masked_attention with scores around -1e10", shape=(2, 4, 5))
    found = weights.detach()
    expect(
        not bool(found.isnan().any()),
        "with allowed scores around -1e10, masked_attention gives NaN weights: exp() of such scores is 0 in floating "
        "point, and 0 / 0 is NaN. torch.softmax subtracts each row's largest score first; do the same, or call it",
    )
    # A finite mask value above every allowed score takes all of a row's weight, shared alike by the forbidden keys.
    forbidden_share = (found * ~keep).sum(-1)
    expect(
        bool((found[..., ~keep] == 0).all()) or not bool(torch.isclose(forbidden_share, torch.ones_like(forbidden_share)).all()),
        "with allowed scores around -1e10, forbidden keys took all the weight: the score that should forbid them is "
        "larger than these, as a large negative number such as -1e9 is; only -inf forbids a key at every scale"
        "; set forbidden scores to float('-inf')",
        "large-negative-masks-key",
    )
    # At ordinary scales the same answer gave forbidden keys no weight: a finite mask value is what gives way here.
    expect(
        bool((found[..., ~keep] == 0).all()),
        "with allowed scores around -1e10, forbidden keys still receive some weight: a finite mask value (such as "
        "-1e9) only forbids while the allowed scores stay far above it, and a forbidden key's score must be "
        "-inf before the softmax, whatever the allowed scores are"
        "; set them to -inf with masked_fill(~keep, float('-inf'))",
        "large-negative-masks-key",
    )
    expect_close(
        weights,
        torch.softmax(scores, dim=-1),
        "masked_attention with scores around -1e10 gives the wrong weights"
        ": set forbidden scores to -inf before torch.softmax, and take the softmax over the keys",
        rtol=1e-12,
        atol=1e-300,
    )


check_masked_attention(0, (1,), 3, 4, 2, 3)
check_huge_scores(0)
print(
    "Checked a seeded case with 3 queries and 4 keys, and one whose allowed scores are around -1e10: forbidden keys "
    "get exactly zero weight, each query's weights sum to one, the output matches scaled_dot_product_attention. "
    "The grader also tests other shapes."
)

### BEGIN HIDDEN TESTS
for seed, lead, length, keys, dim, width in ((80, (2,), 4, 6, 3, 5), (81, (1, 2), 5, 5, 4, 3)):
    check_masked_attention(seed, lead, length, keys, dim, width)
check_huge_scores(82)
### END HIDDEN TESTS

# %% [markdown] md_relative_bias
# ## Another score_mod: a relative-position bias
#
# A score_mod can add as well as forbid. The cell below adds a bias proportional to the distance
# `q_idx - kv_idx` (a simple ALiBi-style slope) and checks FlexAttention against the same bias
# added to the explicit scores. As everywhere in this notebook, the comparison uses explicit
# tolerances, and it says nothing about speed.

# %% demo compile_demo_relative_bias
def distance_bias(score, b, h, q_idx, kv_idx):
    return score - 0.25 * (q_idx - kv_idx).abs()


generator = seeded(2)
q, k, v = (torch.randn(1, 2, 5, 4, dtype=torch.float64, generator=generator) for _ in range(3))
with quiet():
    flex_out = flex_attention(q, k, v, score_mod=distance_bias)
positions = torch.arange(5)
bias = -0.25 * (positions.view(5, 1) - positions.view(1, 5)).abs()
explicit_out = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(4) + bias, dim=-1) @ v
print("FlexAttention agrees with the explicit version:", torch.allclose(flex_out, explicit_out, rtol=1e-10, atol=1e-12))

# %% [markdown] compile_summary
# ## Summary
#
# * Compare a compiled function with its eager reference, outputs **and** gradients, within
#   tolerances you state.
# * Time the first call (compilation) apart from steady-state calls; do not expect tiny or short
#   runs to pay for compilation. No particular speed-up is promised by any of this.
# * In FlexAttention a `score_mod` changes scores (use `-inf` to forbid a key); a block mask
#   says which blocks need computing at all. On CPU it is forward-only and warns when not compiled.
#
# Next: section 8 turns the classic autograd failures into small experiments you can run.

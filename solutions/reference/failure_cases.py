"""Reference answers for notebook 080_failure_cases (lesson section 8)."""
import torch


def repeated_backward_report(function, value):
    """Run backward on function(x) at the point `value` three ways and report what happened.

    `function` maps a float64 scalar tensor to a scalar tensor; `value` is a Python float.
    Return a tuple (first_grad, second_raises, accumulated_grad):
      first_grad        x.grad after one backward() on a fresh graph (a float64 tensor),
      second_raises     True if a second plain backward() on that same output raises, else False,
      accumulated_grad  x.grad after backward(retain_graph=True) then backward() on a new
                        output, starting from x.grad = None.
    """
    x = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    first_grad = x.grad.clone()
    try:
        y.backward()
    except RuntimeError:
        second_raises = True
    else:
        second_raises = False
    x.grad = None
    y = function(x)
    y.backward(retain_graph=True)
    y.backward()
    return first_grad, second_raises, x.grad


def mutation_detected(operation):
    """Report whether autograd notices that x changed in place after z = operation(x, w).

    Make float64 leaves x = 2.0 and w = 3.0 that require grad, compute z = operation(x, w),
    add 1 to x in place inside torch.no_grad(), then call z.backward().
    Return True if backward raises because of the in-place change, False if it runs. If
    backward fails for any other reason, let that error reach the caller unchanged.
    """
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    z = operation(x, w)
    with torch.no_grad():
        x.add_(1)
    try:
        z.backward()
    except RuntimeError as error:
        if "inplace operation" in str(error):
            return True
        raise
    return False

"""One VNN-LIB writer for the Python generators of fixtures and benchmarks.

robustness(path, x0, eps, label, n_out, comment, lo=None, hi=None, fmt="%.9g") writes the
local-robustness property of VNN-COMP: X_i in [x0_i - eps, x0_i + eps] (clipped to [lo, hi]
where given), and the counterexample region "some other output is at least the label's", one
disjunct per other class. fmt formats each bound (the default keeps 9 significant digits; "%r"
writes the double's shortest exact form).
"""


def robustness(path, x0, eps, label, n_out, comment, lo=None, hi=None, fmt="%.9g"):
    def num(v):
        return repr(v) if fmt == "%r" else fmt % v

    lines = ["; " + comment]
    lines += ["(declare-const X_%d Real)" % i for i in range(len(x0))]
    lines += ["(declare-const Y_%d Real)" % j for j in range(n_out)]
    for i, v in enumerate(x0):
        a, b = float(v) - eps, float(v) + eps
        if lo is not None:
            a = max(lo, a)
        if hi is not None:
            b = min(hi, b)
        lines.append("(assert (>= X_%d %s))" % (i, num(a)))
        lines.append("(assert (<= X_%d %s))" % (i, num(b)))
    lines.append("(assert (or")
    lines += ["  (and (>= Y_%d Y_%d))" % (j, label) for j in range(n_out) if j != label]
    lines.append("))")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")

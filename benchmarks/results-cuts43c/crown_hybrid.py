# Where the slack sits (diagnosis only, never a proof): CROWN in float64 with its own intermediate
# bounds (layer by layer, the triangle relaxation), then the same with the per-neuron attack ranges (each
# neuron pushed down and up by 60 signed-gradient steps: an inner approximation of the exact bounds) put in place of CROWN's bounds on
# the first k ReLU layers only, and on the last ones only. Usage: python3 crown_hybrid.py I...
import sys, os, torch
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'crown_inner.py')).read().split("for i in sys.argv[1:]:")[0])
relus = [n for n in nodes if n.op_type == 'Relu']
def crown_from(lo, hi, L, U, start, c):
    global nodes
    keep = nodes
    idx = [k for k, nd in enumerate(nodes) if nd.output[0] == start][0]
    nodes = keep[:idx + 1]
    try:
        return crown(lo, hi, L, U, c)
    finally:
        nodes = keep
def crown_layers(lo, hi, Ls, Us, use):
    # use[k]: True -> take the sampled range for ReLU layer k, else CROWN's bound
    L, U = [], []
    eye = torch.eye(256, dtype=torch.float64)
    for k, nd in enumerate(relus):
        if use[k]:
            L.append(Ls[k]); U.append(Us[k]); continue
        lb = crown_from(lo, hi, L, U, nd.input[0], eye)
        ub = -crown_from(lo, hi, L, U, nd.input[0], -eye)
        L.append(torch.max(lb, torch.zeros(0, dtype=torch.float64).new_full(lb.shape, -1e30)))
        U.append(ub)
    return L, U
STEPS = 60
for i in sys.argv[1:]:
    lo, hi, lab = readprop('props/res_%s.vnnlib' % i); lo = torch.tensor(lo); hi = torch.tensor(hi)
    torch.manual_seed(0)
    # per-neuron PGD: row r of layer k pushes neuron r % 256 down (r < 256) or up
    Ls, Us = [], []
    sgn = torch.cat([torch.ones(256), -torch.ones(256)]).double()
    for k in range(len(relus)):
        x = lo + (hi - lo) * torch.rand(512, 784, dtype=torch.float64)
        for s in range(STEPS):
            x.requires_grad_(True); z = pre_acts(x)[k]
            obj = (z[torch.arange(512), torch.arange(512) % 256] * sgn).sum()
            g, = torch.autograd.grad(obj, x)
            with torch.no_grad(): x = torch.max(torch.min(x - (hi - lo) * (0.5 * (1 - s / STEPS) + 0.02) * g.sign(), hi), lo)
        with torch.no_grad():
            z = pre_acts(x)[k][torch.arange(512), torch.arange(512) % 256]
            Ls.append(z[:256].clone()); Us.append(z[256:].clone())
    with torch.no_grad():
        c = torch.zeros(9, 10, dtype=torch.float64); k = 0
        for t in range(10):
            if t == lab: continue
            c[k, lab] = 1; c[k, t] = -1; k += 1
        out = []
        n = len(relus)
        for name, use in [('crown', [False] * n)] + [('attack first %d' % k, [j < k for j in range(n)]) for k in (3, 5, 7)] + \
                         [('attack last %d' % k, [j >= n - k for j in range(n)]) for k in (2, 4, 6)] + [('attack all', [True] * n)]:
            L, U = crown_layers(lo, hi, Ls, Us, use)
            uns = sum(int(((l < 0) & (u > 0)).sum()) for l, u in zip(L, U))
            out.append('%s: %.3f (%d unstable)' % (name, float(crown(lo, hi, L, U, c).min()), uns))
    print(i, '; '.join(out), flush=True)

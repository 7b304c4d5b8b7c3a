# LP of the best attack point's activation region (scipy HiGHS): the exact minimum of the margin
# inside that region. Usage: python3 lpsearch.py I [SEEDS]   (files as for pgd.py)
# LP local search over activation regions: from the best PGD point, minimise the margin
# y_lab - y_t exactly inside the point's linear region (scipy HiGHS), then flip the tight
# neurons and repeat.
import sys, numpy as np, torch
import os; exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pgd.py')).read().split('R = int(sys.argv[1])')[0])
from scipy.optimize import linprog
def pgd_best(lo, hi, lab, R, S, seed):
    torch.manual_seed(seed)
    tg = torch.tensor([t for t in range(10) if t != lab for r in range(R)])
    x = lo + (hi - lo) * torch.rand(len(tg), 784, dtype=torch.float64)
    for s in range(S):
        x.requires_grad_(True)
        y = fwd(x); other = y.clone(); other[:, lab] = -1e9
        marg = y[:, lab] - other.max(1).values
        loss = (y[:, lab] - y.gather(1, tg[:, None])[:, 0]).sum() if s < S // 2 else marg.sum()
        g, = torch.autograd.grad(loss, x)
        with torch.no_grad():
            step = (hi - lo) * (0.5 * (1 - s / S) + 0.02)
            x = torch.max(torch.min(x - step * g.sign(), hi), lo)
    with torch.no_grad():
        y = fwd(x); other = y.clone(); other[:, lab] = -1e9
        marg = y[:, lab] - other.max(1).values
    k = int(marg.argmin()); return x[k].clone(), float(marg[k]), int(other[k].argmax())
def affine_pre(x):
    # returns list of (A, c) for each ReLU pre-activation as affine function of input in x's region, and output affine
    n = 784
    v = {'input': (torch.eye(n, dtype=torch.float64), torch.zeros(n, dtype=torch.float64), x[None])}
    pres = []
    for nd in nodes:
        if nd.op_type == 'Gemm':
            A, c, val = v[nd.input[0]]; W = WT[nd.input[1]]; b = BT[nd.input[2]]
            v[nd.output[0]] = (A @ W, c @ W + b, val @ W + b)
        elif nd.op_type == 'Relu':
            A, c, val = v[nd.input[0]]; m = (val[0] > 0).double()
            pres.append((A, c, val[0]))
            v[nd.output[0]] = (A * m, c * m, torch.relu(val))
        elif nd.op_type == 'Gather':
            A, c, val = v[nd.input[0]]; ix = IT[nd.input[1]]
            v[nd.output[0]] = (A[:, ix], c[ix], val[:, ix])
        elif nd.op_type == 'Add':
            A1, c1, v1 = v[nd.input[0]]; A2, c2, v2 = v[nd.input[1]]
            v[nd.output[0]] = (A1 + A2, c1 + c2, v1 + v2)
    return pres, v['output']
def lp_step(x, lo, hi, lab, t):
    pres, (Ao, co, vo) = affine_pre(x)
    rows = []; rhs = []
    for A, c, val in pres:
        act = val > 0
        # active: z >= 0 -> -(x A + c) <= 0 ; inactive: z <= 0 -> x A + c <= 0
        S = torch.where(act, -1.0, 1.0).double()
        rows.append((A * S).T.numpy()); rhs.append((-(c * S)).numpy())
    Aub = np.vstack(rows); bub = np.concatenate(rhs)
    obj = (Ao[:, lab] - Ao[:, t]).numpy(); const = float(co[lab] - co[t])
    r = linprog(obj, A_ub=Aub, b_ub=bub, bounds=list(zip(lo.numpy(), hi.numpy())), method='highs')
    if r.status != 0: return None, None
    return torch.tensor(r.x), r.fun + const
i = sys.argv[1]; lo, hi, lab = readprop('props/res_%s.vnnlib' % i); lo = torch.tensor(lo); hi = torch.tensor(hi)
for seed in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
    x, m, t = pgd_best(lo, hi, lab, 8, 150, seed)
    print('seed', seed, 'pgd margin', m, 'target', t, flush=True)
    for it in range(8):
        xn, val = lp_step(x, lo, hi, lab, t)
        if xn is None: print(' lp failed'); break
        with torch.no_grad():
            y = fwd(xn[None])[0]; other = y.clone(); other[lab] = -1e9
            real = float(y[lab] - other.max())
        print(' it', it, 'lp region min', val, 'net margin at lp point', real, flush=True)
        if real < 0:
            np.save('cex_%s.npy' % i, xn.numpy()); print(' VIOLATED', flush=True); sys.exit(0)
        # step slightly beyond the LP optimum into neighbouring regions via short PGD
        x = xn
        xx = x.clone()[None]
        for s in range(20):
            xx.requires_grad_(True); y = fwd(xx); g, = torch.autograd.grad((y[:, lab] - y[:, t]).sum(), xx)
            with torch.no_grad(): xx = torch.max(torch.min(xx - (hi - lo) * 0.01 * g.sign(), hi), lo)
        x = xx[0].detach()

# Guided MILP (scipy HiGHS): every neuron fixed to its phase at the best attack point but the K
# closest to switching, which get binaries (big-M from interval bounds). Usage: python3 milpsearch.py I K SECONDS [ROUNDS]
import sys, numpy as np, torch, scipy.sparse as sp
import os; exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lpsearch.py')).read().split("i = sys.argv[1]")[0])
from scipy.optimize import milp, LinearConstraint, Bounds
def interval(lo, hi):
    v = {'input': (lo, hi)}; pre = []
    for nd in nodes:
        if nd.op_type == 'Gemm':
            l, u = v[nd.input[0]]; W = WT[nd.input[1]]; b = BT[nd.input[2]]
            c = (l + u) / 2; r = (u - l) / 2
            v[nd.output[0]] = (c @ W + b - r @ W.abs(), c @ W + b + r @ W.abs())
        elif nd.op_type == 'Relu':
            l, u = v[nd.input[0]]; pre.append((l, u)); v[nd.output[0]] = (l.clamp(min=0), u.clamp(min=0))
        elif nd.op_type == 'Gather':
            l, u = v[nd.input[0]]; ix = IT[nd.input[1]]; v[nd.output[0]] = (l[ix], u[ix])
        elif nd.op_type == 'Add':
            l1, u1 = v[nd.input[0]]; l2, u2 = v[nd.input[1]]; v[nd.output[0]] = (l1 + l2, u1 + u2)
    return pre
def solve(x0, lo, hi, lab, t, K, tl):
    # score neurons
    xx = x0.clone()[None].requires_grad_(True)
    v = {'input': xx}; zs = []
    for nd in nodes:
        if nd.op_type == 'Gemm': v[nd.output[0]] = v[nd.input[0]] @ WT[nd.input[1]] + BT[nd.input[2]]
        elif nd.op_type == 'Relu': z = v[nd.input[0]]; z.retain_grad(); zs.append(z); v[nd.output[0]] = torch.relu(z)
        elif nd.op_type == 'Gather': v[nd.output[0]] = v[nd.input[0]][:, IT[nd.input[1]]]
        elif nd.op_type == 'Add': v[nd.output[0]] = v[nd.input[0]] + v[nd.input[1]]
    y = v['output']; (y[0, lab] - y[0, t]).backward()
    zv = torch.cat([z[0].detach() for z in zs]); gz = torch.cat([z.grad[0] for z in zs])
    # neuron j: flipping it changes the objective ~ by -gz*z when active etc.; pick small |z|
    score = zv.abs() / (gz.abs() + 1e-9)
    score[gz == 0] = 1e18
    free = set(torch.argsort(score)[:K].tolist())
    pre = interval(lo, hi)
    # variables: x(784) | per relu layer: z(256), a(256), d(256 binaries only used for free)
    nL = len(pre); w = 256
    nx = 784; off = lambda l: nx + l * 3 * w
    N = nx + nL * 3 * w
    rows = []; lb = []; ub = []
    def row(entries, l_, u_): rows.append(entries); lb.append(l_); ub.append(u_)
    # linear layers: walk the graph, keep each value as list of (var index, coefficient-matrix) terms
    v = {'input': [(0, None)]}  # symbolic: list of (start var, transform) -> we build z = W a + b
    vals = {'input': ('x', None)}
    li = 0; aff = {}
    # represent each tensor as (list of (var_start, idx or None), bias); Gemm: z_j = sum_i W_ij a_i + b_j
    tens = {'input': ([(0, np.arange(784))], 0.0)}
    A = []; 
    for nd in nodes:
        if nd.op_type == 'Gemm':
            src, _ = tens[nd.input[0]]; W = WT[nd.input[1]].numpy(); b = BT[nd.input[2]].numpy()
            tens[nd.output[0]] = ('gemm', src, W, b)
        elif nd.op_type == 'Gather':
            src, _ = tens[nd.input[0]]; ix = IT[nd.input[1]].numpy()
            tens[nd.output[0]] = ('gather', [(s, i[ix]) for s, i in src])
        elif nd.op_type == 'Add':
            tens[nd.output[0]] = ('add', tens[nd.input[0]], tens[nd.input[1]])
        elif nd.op_type == 'Relu':
            zs_ = off(li)
            # z = expression
            exprs = []
            def collect(T, sign=1.0):
                if T[0] == 'gemm':
                    _, src, W, b = T
                    for s, ii in src: exprs.append(('W', s, ii, W))
                    return b
                if T[0] == 'gather':
                    for s, ii in T[1]: exprs.append(('I', s, ii, None))
                    return 0.0
                if T[0] == 'add':
                    return collect(T[1]) + collect(T[2])
            bias = collect(tens[nd.input[0]])
            # equality rows z_j - sum = bias
            M = sp.lil_matrix((w, N))
            for kind, s, ii, W in exprs:
                if kind == 'W':
                    M[:, s + ii] = M[:, s + ii] - W.T
                else:
                    for j in range(w): M[j, s + ii[j]] -= 1.0
            for j in range(w): M[j, zs_ + j] += 1.0
            A.append((M.tocsr(), np.broadcast_to(bias, (w,)).astype(float), np.broadcast_to(bias, (w,)).astype(float)))
            l, u = pre[li]; l = l.numpy(); u = u.numpy()
            Mr = sp.lil_matrix((3 * w, N)); rl = np.full(3 * w, -np.inf); ru = np.full(3 * w, np.inf)
            for j in range(w):
                g = li * w + j; z = zs_ + j; a = zs_ + w + j; d = zs_ + 2 * w + j
                if g in free:
                    # a >= z ; a <= z - l(1-d) -> a - z - l d <= -l ; a <= u d
                    Mr[3*j, a] = 1; Mr[3*j, z] = -1; rl[3*j] = 0
                    Mr[3*j+1, a] = 1; Mr[3*j+1, z] = -1; Mr[3*j+1, d] = -min(l[j], 0); ru[3*j+1] = -min(l[j], 0)
                    Mr[3*j+2, a] = 1; Mr[3*j+2, d] = -max(u[j], 0); ru[3*j+2] = 0
                elif zv[g] > 0:
                    Mr[3*j, a] = 1; Mr[3*j, z] = -1; rl[3*j] = 0; ru[3*j] = 0
                    Mr[3*j+1, z] = 1; rl[3*j+1] = 0
                else:
                    Mr[3*j, a] = 1; rl[3*j] = 0; ru[3*j] = 0
                    Mr[3*j+1, z] = 1; ru[3*j+1] = 0
            A.append((Mr.tocsr(), rl, ru))
            tens[nd.output[0]] = ([(zs_ + w, np.arange(w))], 0.0)
            li += 1
    # output
    T = tens[nodes[-1].output[0]]; _, src, W, b = T
    c = np.zeros(N)
    for s, ii in src: c[s + ii] += W[:, lab] - W[:, t]
    const = b[lab] - b[t]
    Aall = sp.vstack([m for m, _, _ in A]).tocsr(); L = np.concatenate([l_ for _, l_, _ in A]); U = np.concatenate([u_ for _, _, u_ in A])
    vlb = np.full(N, -np.inf); vub = np.full(N, np.inf); vlb[:784] = lo.numpy(); vub[:784] = hi.numpy()
    integ = np.zeros(N)
    for li_ in range(nL):
        for j in range(w):
            d = off(li_) + 2 * w + j; vlb[d] = 0; vub[d] = 1
            if li_ * w + j in free: integ[d] = 1
    r = milp(c, constraints=LinearConstraint(Aall, L, U), bounds=Bounds(vlb, vub), integrality=integ,
             options={'time_limit': tl, 'disp': False})
    if r.x is None: return None, None, r.message
    return torch.tensor(r.x[:784]), r.fun + const, r.message
i = sys.argv[1]; K = int(sys.argv[2]); tl = float(sys.argv[3])
lo, hi, lab = readprop('props/res_%s.vnnlib' % i); lo = torch.tensor(lo); hi = torch.tensor(hi)
x, m, t = pgd_best(lo, hi, lab, 8, 150, 0)
print(i, 'pgd margin', m, 'target', t, flush=True)
for rnd in range(int(sys.argv[4]) if len(sys.argv) > 4 else 1):
    xn, val, msg = solve(x, lo, hi, lab, t, K, tl)
    if xn is None: print(' milp', msg); break
    with torch.no_grad():
        y = fwd(xn[None])[0]; other = y.clone(); other[lab] = -1e9; real = float(y[lab] - other.max())
    print(' round', rnd, 'K', K, 'milp', val, msg, 'net margin', real, flush=True)
    np.save('milp_%s.npy' % i, xn.numpy())
    if real < 0: print(' VIOLATED'); break
    x = xn

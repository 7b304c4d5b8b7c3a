# Region walk: flips each of the K neurons closest to switching at the region's LP optimum and
# moves to the best flipped region while its LP minimum decreases. Usage: python3 flipsearch.py I K ROUNDS
# Region-walk: from the best PGD point, LP-minimise y_lab - y_t inside one activation region
# (scipy HiGHS); try flipping each of the K neurons closest to switching (|z| small at the
# LP optimum); move to the best flipped region while the LP minimum decreases.
import sys, numpy as np, torch
import os; exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lpsearch.py')).read().split("i = sys.argv[1]")[0])
def affine_pat(x, pat):
    n = 784; v = {'input': (torch.eye(n, dtype=torch.float64), torch.zeros(n, dtype=torch.float64), x[None])}
    pres = []; li = 0
    for nd in nodes:
        if nd.op_type == 'Gemm':
            A, c, val = v[nd.input[0]]; W = WT[nd.input[1]]; b = BT[nd.input[2]]
            v[nd.output[0]] = (A @ W, c @ W + b, val @ W + b)
        elif nd.op_type == 'Relu':
            A, c, val = v[nd.input[0]]
            act = pat[li] if pat is not None else (val[0] > 0)
            m = act.double(); pres.append((A, c, act)); li += 1
            v[nd.output[0]] = (A * m, c * m, torch.relu(val))
        elif nd.op_type == 'Gather':
            A, c, val = v[nd.input[0]]; ix = IT[nd.input[1]]; v[nd.output[0]] = (A[:, ix], c[ix], val[:, ix])
        elif nd.op_type == 'Add':
            A1, c1, v1 = v[nd.input[0]]; A2, c2, v2 = v[nd.input[1]]; v[nd.output[0]] = (A1 + A2, c1 + c2, v1 + v2)
    return pres, v['output']
def region_lp(pat, lo, hi, lab, t):
    pres, (Ao, co, _) = affine_pat(lo, pat)
    rows = []; rhs = []
    for A, c, act in pres:
        S = torch.where(act, -1.0, 1.0).double(); rows.append((A * S).T.numpy()); rhs.append((-(c * S)).numpy())
    obj = (Ao[:, lab] - Ao[:, t]).numpy(); const = float(co[lab] - co[t])
    r = linprog(obj, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), bounds=list(zip(lo.numpy(), hi.numpy())), method='highs')
    if r.status != 0: return None, None
    return torch.tensor(r.x), r.fun + const
def pattern(x):
    v = {'input': x[None]}; pat = []; zs = []
    for nd in nodes:
        if nd.op_type == 'Gemm': v[nd.output[0]] = v[nd.input[0]] @ WT[nd.input[1]] + BT[nd.input[2]]
        elif nd.op_type == 'Relu': z = v[nd.input[0]][0]; pat.append(z > 0); zs.append(z); v[nd.output[0]] = torch.relu(v[nd.input[0]])
        elif nd.op_type == 'Gather': v[nd.output[0]] = v[nd.input[0]][:, IT[nd.input[1]]]
        elif nd.op_type == 'Add': v[nd.output[0]] = v[nd.input[0]] + v[nd.input[1]]
    return pat, zs
i = sys.argv[1]; K = int(sys.argv[2]); rounds = int(sys.argv[3])
lo, hi, lab = readprop('props/res_%s.vnnlib' % i); lo = torch.tensor(lo); hi = torch.tensor(hi)
x, m, t = pgd_best(lo, hi, lab, 8, 150, 0)
print(i, 'pgd margin', m, 'target', t, flush=True)
with torch.no_grad():
    pat, zs = pattern(x)
    xb, vb = region_lp(pat, lo, hi, lab, t)
print(' start region min', vb, flush=True)
for rnd in range(rounds):
    with torch.no_grad():
        _, zs = pattern(xb)
    flat = torch.cat(zs).abs(); cand = torch.argsort(flat)[:K].tolist()
    best = None
    for g in cand:
        p2 = [q.clone() for q in pat]; p2[g // 256][g % 256] = ~p2[g // 256][g % 256]
        xn, vn = region_lp(p2, lo, hi, lab, t)
        if xn is not None and vn < vb - 1e-9 and (best is None or vn < best[1]): best = (p2, vn, xn)
    if best is None: print(' no improving flip among', K); break
    pat, vb, xb = best
    with torch.no_grad():
        y = fwd(xb[None])[0]; other = y.clone(); other[lab] = -1e9; real = float(y[lab] - other.max())
    print(' round', rnd, 'region min', vb, 'net margin', real, flush=True)
    if real < 0: np.save('cex_%s.npy' % i, xb.numpy()); print(' VIOLATED', flush=True); break

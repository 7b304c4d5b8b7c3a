# Optimistic limit of intermediate-bound tightening (diagnosis only, never a proof): CROWN
# (triangle relaxation, adaptive lower slope, float64) whose pre-activation bounds are the ranges
# seen on sampled and attacked points. Those ranges are an INNER approximation of the exact
# bounds, so the result estimates from above what exact intermediate bounds could give with the
# single-neuron relaxation (exactly so for its LP; CROWN's fixed slope choice makes it approximate).
# Usage: python3 crown_inner.py I...   (files as for pgd.py)
import sys, numpy as np, torch
import os; exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lpsearch.py')).read().split("i = sys.argv[1]")[0])
def pre_acts(x):
    v = {'input': x}; zs = []
    for nd in nodes:
        if nd.op_type == 'Gemm': v[nd.output[0]] = v[nd.input[0]] @ WT[nd.input[1]] + BT[nd.input[2]]
        elif nd.op_type == 'Relu': zs.append(v[nd.input[0]]); v[nd.output[0]] = torch.relu(v[nd.input[0]])
        elif nd.op_type == 'Gather': v[nd.output[0]] = v[nd.input[0]][:, IT[nd.input[1]]]
        elif nd.op_type == 'Add': v[nd.output[0]] = v[nd.input[0]] + v[nd.input[1]]
    return zs
def crown(lo, hi, L, U, c):
    # c: [m, 10] output coefficients; returns lower bounds of c·y over the box
    lam = {nodes[-1].output[0]: c.clone()}; const = torch.zeros(c.shape[0], dtype=torch.float64)
    relu_i = {nd.output[0]: k for k, nd in enumerate([n for n in nodes if n.op_type == 'Relu'])}
    relus = [n for n in nodes if n.op_type == 'Relu']
    for nd in reversed(nodes):
        o = nd.output[0]
        if o not in lam: continue
        Lo = lam.pop(o)
        def add(name, M):
            lam[name] = lam[name] + M if name in lam else M
        if nd.op_type == 'Gemm':
            W = WT[nd.input[1]]; b = BT[nd.input[2]]
            const += Lo @ b; add(nd.input[0], Lo @ W.T)
        elif nd.op_type == 'Gather':
            src = nd.input[0]; ix = IT[nd.input[1]]
            M = torch.zeros(Lo.shape[0], 256, dtype=torch.float64); M.index_add_(1, ix, Lo); add(src, M)
        elif nd.op_type == 'Add':
            add(nd.input[0], Lo.clone()); add(nd.input[1], Lo.clone())
        elif nd.op_type == 'Relu':
            k = relus.index(nd); l = L[k]; u = U[k]
            act = l >= 0; ina = u <= 0; uns = ~act & ~ina
            su = torch.where(uns, u / (u - l).clamp(min=1e-12), act.double())
            bu = torch.where(uns, -l * su, torch.zeros_like(l))
            sl = torch.where(uns, (u >= -l).double(), act.double())
            pos = Lo.clamp(min=0); neg = Lo.clamp(max=0)
            const += neg @ bu
            add(nd.input[0], pos * sl + neg * su)
    Li = lam['input']
    return const + (Li.clamp(min=0) @ lo) + (Li.clamp(max=0) @ hi)
for i in sys.argv[1:]:
    lo, hi, lab = readprop('props/res_%s.vnnlib' % i); lo = torch.tensor(lo); hi = torch.tensor(hi)
    torch.manual_seed(0)
    pts = [lo + (hi - lo) * torch.rand(2000, 784, dtype=torch.float64),
           lo + (hi - lo) * (torch.rand(2000, 784, dtype=torch.float64) > 0.5).double()]
    # PGD trajectories towards each neuron extreme are too many; add the margin attack's points
    for t in range(10):
        if t == lab: continue
        x = lo + (hi - lo) * torch.rand(16, 784, dtype=torch.float64)
        for s in range(60):
            x.requires_grad_(True); y = fwd(x); g, = torch.autograd.grad((y[:, lab] - y[:, t]).sum(), x)
            with torch.no_grad(): x = torch.max(torch.min(x - (hi - lo) * (0.3 * (1 - s / 60) + 0.02) * g.sign(), hi), lo)
            if s % 10 == 9: pts.append(x.detach().clone())
    X = torch.cat(pts)
    with torch.no_grad():
        zs = pre_acts(X); L = [z.min(0).values for z in zs]; U = [z.max(0).values for z in zs]
        c = torch.zeros(9, 10, dtype=torch.float64); k = 0
        for t in range(10):
            if t == lab: continue
            c[k, lab] = 1; c[k, t] = -1; k += 1
        b = crown(lo, hi, L, U, c)
        # sanity: with interval bounds the same routine must be below the sampled minimum
        y = fwd(X); smin = (y[:, lab:lab+1] - y).min(0).values
        uns = sum(int(((l < 0) & (u > 0)).sum()) for l, u in zip(L, U))
    print(i, 'sampled-range CROWN min bound', round(float(b.min()), 3), 'unstable (sampled)', uns,
          'sampled min margin', round(float(torch.cat([smin[:lab], smin[lab+1:]]).min()), 3), flush=True)

# Strong attack on the open residual images (diagnosis only, benchmarks/VERIFY.md "Open residual
# images: where the margin lies"). Usage, in a directory with relu.onnx (lgelu export relu.lgnet
# -o relu.onnx) and props/res_I.vnnlib (lgelu encode relu.lgnet --index I --eps 0.01 --format vnnlib):
#   python3 pgd.py RESTARTS STEPS I...
# RESTARTS per target class, targeted loss for the first half of the steps, margin loss after;
# signed-gradient steps of a decaying fraction of the box width. Prints the lowest margin
# y_label - max_other y found (a float64 evaluation: an upper estimate of the true minimum,
# no proof of anything).
import sys, re, numpy as np, torch, onnx
from onnx import numpy_helper
torch.set_num_threads(1)
m = onnx.load('relu.onnx')
init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
nodes = m.graph.node
def fwd(x):
    v = {'input': x}
    for n in nodes:
        if n.op_type == 'Gemm':
            W = WT[n.input[1]]; b = BT[n.input[2]]
            v[n.output[0]] = v[n.input[0]] @ W + b
        elif n.op_type == 'Relu':
            v[n.output[0]] = torch.relu(v[n.input[0]])
        elif n.op_type == 'Gather':
            v[n.output[0]] = v[n.input[0]][:, IT[n.input[1]]]
        elif n.op_type == 'Add':
            v[n.output[0]] = v[n.input[0]] + v[n.input[1]]
        else: raise Exception(n.op_type)
    return v['output']
WT, BT, IT = {}, {}, {}
for n in nodes:
    if n.op_type == 'Gemm':
        attrs = {a.name: a.i for a in n.attribute}
        W = init[n.input[1]].astype(np.float64)
        if attrs.get('transB', 0): W = W.T
        WT[n.input[1]] = torch.tensor(W); BT[n.input[2]] = torch.tensor(init[n.input[2]].astype(np.float64))
    if n.op_type == 'Gather':
        IT[n.input[1]] = torch.tensor(init[n.input[1]].astype(np.int64))
def readprop(f):
    lo = np.zeros(784); hi = np.zeros(784); lab = None
    for l in open(f):
        mm = re.match(r'\(assert \(([<>]=) X_(\d+) (\S+)\)\)', l)
        if mm:
            (lo if mm.group(1) == '>=' else hi)[int(mm.group(2))] = float(mm.group(3))
        mm = re.search(r'label (\d+)', l)
        if mm and lab is None: lab = int(mm.group(1))
    return lo, hi, lab
R = int(sys.argv[1]); S = int(sys.argv[2])
for i in sys.argv[3:]:
    lo, hi, lab = readprop('props/res_%s.vnnlib' % i)
    lo = torch.tensor(lo); hi = torch.tensor(hi)
    torch.manual_seed(int(i))
    best = 1e9
    tg = torch.tensor([t for t in range(10) if t != lab for r in range(R)])
    x = lo + (hi - lo) * torch.rand(len(tg), 784, dtype=torch.float64)
    x[::R] = (lo + hi) / 2
    for s in range(S):
        x.requires_grad_(True)
        y = fwd(x)
        other = y.clone(); other[:, lab] = -1e9
        marg = y[:, lab] - other.max(1).values
        loss = (y[:, lab] - y.gather(1, tg[:, None])[:, 0]).sum() if s < S // 2 else marg.sum()
        g, = torch.autograd.grad(loss, x)
        with torch.no_grad():
            mb = marg.min().item(); best = min(best, mb)
            step = (hi - lo) * (0.5 * (1 - s / S) + 0.02)
            x = torch.max(torch.min(x - step * g.sign(), hi), lo)
    with torch.no_grad():
        y = fwd(x); other = y.clone(); other[:, lab] = -1e9
        mb = (y[:, lab] - other.max(1).values).min().item(); best = min(best, mb)
    print(i, 'label', lab, 'best margin', best, flush=True)

import json, statistics as S, sys
L={}
for line in open('/tmp/c43/peer_lgelu.txt'):
    p=line.split(' ',2)
    try: r=json.loads(p[2])
    except Exception: r={'verdict':'error','seconds':30,'method':'-'}
    L[p[1]]=r
A={}
for line in open('/tmp/c43/peer_ab.txt'):
    if line.startswith('done'): continue
    k,v=line.split(); res,t=v.split(','); A[k]=(res,float(t))
keys=[k for k in A if k in L]
for net in ('fc4','fc6'):
    ks=[k for k in keys if k.startswith(net+'_')]
    ld=[k for k in ks if L[k]['verdict'] in ('robust','violated')]
    ad=[k for k in ks if A[k][0] in ('sat','unsat')]
    lr=sum(L[k]['verdict']=='robust' for k in ks); lv=sum(L[k]['verdict']=='violated' for k in ks)
    ar=sum(A[k][0]=='unsat' for k in ks); av=sum(A[k][0]=='sat' for k in ks)
    dis=[k for k in ks if (L[k]['verdict'],A[k][0]) in (('robust','sat'),('violated','unsat'))]
    only_a=[k for k in ad if k not in ld]; only_l=[k for k in ld if k not in ad]
    meth={}
    for k in ld: meth[L[k]['method']]=meth.get(L[k]['method'],0)+1
    both=[k for k in ld if k in ad]
    rt=[L[k]['seconds']/A[k][1] for k in both]
    print(net, len(ks), 'lgelu', len(ld), lr, lv, meth, 'median s', round(S.median([L[k]['seconds'] for k in ks]),2),
          '| ab', len(ad), ar, av, 'median s', round(S.median([A[k][1] for k in ks]),2), '| dis', dis, 'only ab', only_a, 'only lgelu', len(only_l),
          'both', len(both), 'median time ratio', round(S.median(rt),4) if rt else None)
    print('   lgelu open:', [k for k in ks if k not in ld], ' ab decides in', [(k,A[k]) for k in ad if L[k]['method'] not in ('bounds','attack')])
errs=[k for k in keys if A[k][0]=='error']
print('ab errors', errs)

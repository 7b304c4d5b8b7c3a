set title 'cactus: 16,16,10, mode z3 (instances decided vs seconds per instance)'
set xlabel 'instances decided'
set ylabel 'seconds (log)'
set logscale y
set key outside right
set grid
titles = 'relu gelu_swap lgelu_learned anneal_s0.1_l40 anneal_s0.1_l160 anneal_s0.1_l640 anneal_s0.25_l40 anneal_s0.25_l160 anneal_s0.25_l640 anneal_s0.5_l40 anneal_s0.5_l160 anneal_s0.5_l640 gelu_anneal swish_anneal prelu_anneal'
plot for [i=1:15] 'benchmarks/results/plots/cactus_16-16-10_z3.dat' index (i-1) using 1:2 with steps lw 2 title word(titles, i)

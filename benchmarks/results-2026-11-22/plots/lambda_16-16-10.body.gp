set title 'lambda per hidden layer over training (16,16,10, first seed; log scale)'
set xlabel 'epoch'
set ylabel 'lambda'
set logscale y
set key outside right
set grid
titles = 'gelu_swap:L0 lgelu_learned:L0 anneal_s0.1_l160:L0 anneal_s0.25_l160:L0 anneal_s0.5_l160:L0 gelu_anneal:L0 anneal_s0.1_l40:L0 anneal_s0.1_l640:L0 anneal_s0.25_l40:L0 anneal_s0.25_l640:L0 anneal_s0.5_l40:L0 anneal_s0.5_l640:L0 swish_anneal:L0 prelu_anneal:L0'
plot for [i=1:14] 'benchmarks/results/plots/lambda_16-16-10.dat' index (i-1) using 1:2 with linespoints title word(titles, i)

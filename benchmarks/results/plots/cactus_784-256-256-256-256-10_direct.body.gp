set title 'cactus: 784,256,256,256,256,10, mode direct (instances decided vs seconds per instance)'
set xlabel 'instances decided'
set ylabel 'seconds (log)'
set logscale y
set key outside right
set grid
titles = 'relu gelu_swap lgelu_learned anneal_s0.25_l160 anneal_s0.25_l640 gelu_anneal rs_relu rs_lgelu rs_anneal'
plot for [i=1:9] 'out/full/plots/cactus_784-256-256-256-256-10_direct.dat' index (i-1) using 1:2 with steps lw 2 title word(titles, i)

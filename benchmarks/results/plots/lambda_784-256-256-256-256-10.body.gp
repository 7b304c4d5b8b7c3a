set multiplot layout 3,3 title 'lambda per hidden layer over training (784,256,256,256,256,10, first seed; log scale), a panel per regime'
set xlabel 'epoch'
set logscale y
set grid
set key top left
set title 'gelu_swap'
plot for [i=0:3] 'out/full/plots/lambda_784-256-256-256-256-10.dat' index i using 1:2 with linespoints pt 7 ps 0.4 title sprintf('layer %d', i - 0)
set title 'lgelu_learned'
plot for [i=4:7] 'out/full/plots/lambda_784-256-256-256-256-10.dat' index i using 1:2 with linespoints pt 7 ps 0.4 title sprintf('layer %d', i - 4)
set title 'anneal_s0.25_l160'
plot for [i=8:11] 'out/full/plots/lambda_784-256-256-256-256-10.dat' index i using 1:2 with linespoints pt 7 ps 0.4 title sprintf('layer %d', i - 8)
set title 'anneal_s0.25_l640'
plot for [i=12:15] 'out/full/plots/lambda_784-256-256-256-256-10.dat' index i using 1:2 with linespoints pt 7 ps 0.4 title sprintf('layer %d', i - 12)
set title 'gelu_anneal'
plot for [i=16:19] 'out/full/plots/lambda_784-256-256-256-256-10.dat' index i using 1:2 with linespoints pt 7 ps 0.4 title sprintf('layer %d', i - 16)
set title 'rs_lgelu'
plot for [i=20:23] 'out/full/plots/lambda_784-256-256-256-256-10.dat' index i using 1:2 with linespoints pt 7 ps 0.4 title sprintf('layer %d', i - 20)
set title 'rs_anneal'
plot for [i=24:27] 'out/full/plots/lambda_784-256-256-256-256-10.dat' index i using 1:2 with linespoints pt 7 ps 0.4 title sprintf('layer %d', i - 24)
unset multiplot

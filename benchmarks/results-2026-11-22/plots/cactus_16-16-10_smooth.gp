set termoption noenhanced
set terminal pngcairo size 960,600 noenhanced
set output 'benchmarks/results/plots/cactus_16-16-10_smooth.png'
load 'benchmarks/results/plots/cactus_16-16-10_smooth.body.gp'
set terminal svg size 960,600 noenhanced
set output 'benchmarks/results/plots/cactus_16-16-10_smooth.svg'
load 'benchmarks/results/plots/cactus_16-16-10_smooth.body.gp'
unset output

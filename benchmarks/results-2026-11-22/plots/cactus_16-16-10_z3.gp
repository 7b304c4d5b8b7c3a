set termoption noenhanced
set terminal pngcairo size 960,600 noenhanced
set output 'benchmarks/results/plots/cactus_16-16-10_z3.png'
load 'benchmarks/results/plots/cactus_16-16-10_z3.body.gp'
set terminal svg size 960,600 noenhanced
set output 'benchmarks/results/plots/cactus_16-16-10_z3.svg'
load 'benchmarks/results/plots/cactus_16-16-10_z3.body.gp'
unset output

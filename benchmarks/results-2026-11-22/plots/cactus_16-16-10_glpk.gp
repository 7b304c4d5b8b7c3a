set termoption noenhanced
set terminal pngcairo size 960,600 noenhanced
set output 'benchmarks/results/plots/cactus_16-16-10_glpk.png'
load 'benchmarks/results/plots/cactus_16-16-10_glpk.body.gp'
set terminal svg size 960,600 noenhanced
set output 'benchmarks/results/plots/cactus_16-16-10_glpk.svg'
load 'benchmarks/results/plots/cactus_16-16-10_glpk.body.gp'
unset output

set termoption noenhanced
set terminal pngcairo size 960,600 noenhanced
set output 'out/full/plots/arch_time.png'
load 'out/full/plots/arch_time.body.gp'
set terminal svg size 960,600 noenhanced
set output 'out/full/plots/arch_time.svg'
load 'out/full/plots/arch_time.body.gp'
unset output

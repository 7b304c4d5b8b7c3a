set termoption noenhanced
set terminal pngcairo size 1080,840 noenhanced
set output 'out/full/plots/lambda_1x28x28-c8k3s2-c16k3s2-10.png'
load 'out/full/plots/lambda_1x28x28-c8k3s2-c16k3s2-10.body.gp'
set terminal svg size 1080,840 noenhanced
set output 'out/full/plots/lambda_1x28x28-c8k3s2-c16k3s2-10.svg'
load 'out/full/plots/lambda_1x28x28-c8k3s2-c16k3s2-10.body.gp'
unset output

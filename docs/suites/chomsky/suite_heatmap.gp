$map << EOD
0.507 0.502 0.653 0.509 0.509 0.507 0.84 0.773 0.504 0.923 0.526 0.528 0.5 0.509 0.509 0.525 0.509
0.218 0.218 0.221 0.216 0.204 0.218 0.218 0.218 0.218 0.216 0.217 0.217 0.22 0.218 0.218 0.218 0.218
0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5
0.31 0.212 0.266 0.22 0.219 0.388 0.283 0.357 0.221 0.337 0.285 0.3 0.239 0.341 0.327 0.33 0.286
0 0 0 0 0 0 0 0.001 0 0 0 0 0 0 0 0 0
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
0.315 0.315 0.315 0.315 0.316 0.315 0.315 0.316 0.316 0.315 0.315 0.315 0.307 0.315 0.315 0.315 0.315
0.222 0.222 0.198 0.222 0.194 0.222 0.222 0.222 0.222 0.193 0.232 0.234 0.191 0.222 0.222 0.199 0.223
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
0.538 0.541 0.536 0.538 0.534 0.542 0.541 0.586 0.547 0.544 0.537 0.563 0.61 0.546 0.54 0.538 0.556
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
0 0 0.026 0 0.003 0.254 0 0.022 0 0.013 0 0 0.017 0.038 0.032 0.013 0
EOD
set xtics ('none (rec.)' 0, 'sinusoidal (rec.)' 1, 'sinusoidal+randomized (rec.)' 2, 'learned (rec.)' 3, 'learned+randomized (rec.)' 4, 'relative (rec.)' 5, 'xl_relative (rec.)' 6, 'xl_relative+randomized (rec.)' 7, 'rotary (rec.)' 8, 'rotary+randomized (rec.)' 9, 'alibi (rec.)' 10, 'alibi_deepmind (rec.)' 11, 'alibi_deepmind+randomized (rec.)' 12, 't5_d16 (rec.)' 13, 'fire (rec.)' 14, 'kerple (rec.)' 15, 'sandwich (rec.)' 16) rotate by 45 right
set ytics ('even_pairs' 0, 'modular_arithmetic' 1, 'parity_check' 2, 'cycle_navigation' 3, 'stack_manipulation' 4, 'reverse_string' 5, 'modular_arithmetic_brackets' 6, 'solve_equation' 7, 'duplicate_string' 8, 'missing_duplicate_string' 9, 'odds_first' 10, 'binary_addition' 11, 'binary_multiplication' 12, 'compute_sqrt' 13, 'bucket_sort' 14)
set yrange [14.5:-0.5] reverse
set xrange [-0.5:16.5]
set cbrange [0:1]
set palette defined (0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')
set title 'suite chomsky: max over seeds of sequence_accuracy beyond training'
unset key
set terminal pngcairo size 1490,740 font 'sans,11'
set termoption noenhanced
set output 'suite_heatmap.png'
plot $map matrix with image, $map matrix using 1:2:($3 == $3 ? sprintf('%.2f', $3) : '') with labels
unset output
set terminal svg size 1490,740 font 'sans,13' background rgb 'white'
set termoption noenhanced
set output 'suite_heatmap.svg'
plot $map matrix with image, $map matrix using 1:2:($3 == $3 ? sprintf('%.2f', $3) : '') with labels
unset output

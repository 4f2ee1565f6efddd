#!/bin/bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=ON -DWEFT_WERROR=ON > $OUT/cfg.log 2>&1 && cmake --build build-gpu -j16 > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "built $(( $(date +%s)-t0 ))s"
(cd build-gpu && timeout 300 ctest -R "cuda|gpu|pingpong|host_pin|user_pin" -j3 --timeout 200 > $OUT/ctest.log 2>&1); grep -E "tests passed|tests failed" $OUT/ctest.log; grep -E "\*\*\*Failed|Timeout" $OUT/ctest.log | head
echo "tests $(( $(date +%s)-t0 ))s"
g() { awk '/^\[\*\*\*\*\] TIME/ { printf "%s ", $(NF - 1) } /PASSED|FAILED|rror/ {print}'; }
echo "geqrf 2x1 sharing, hier: $(mpiexec -n 2 --bind-to none build-gpu/apps/weft-geqrf -N 4096 -P 2 -Q 1 -g 1 --tree hier --check 2>&1 | g)"
gcc -std=c11 -O2 -fopenmp -I/usr/local/cuda/include bench/cusolver_potrf.c -o /tmp/cp -L/usr/local/cuda/lib64 -lcusolver -lcublas -lcudart -lm
for n in 8192 16384 32768; do
  echo "N=$n cusolver: $(/tmp/cp -N $n --nruns 4 2>&1 | g)"
  echo "N=$n weft: $(build-gpu/apps/weft-potrf -N $n -g 1 --nruns 4 2>&1 | g)"
done
echo "t=$(( $(date +%s)-t0 ))s"

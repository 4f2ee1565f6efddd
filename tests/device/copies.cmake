# Tasks on devices and the copies between them (included by CMakeLists.txt):
# stress chains, peer and staged device-to-device copies, 2D stage copies,
# the best device, home devices, distributed runs under memory pressure.

# Stress: GEMM chains with NEW tiles on devices, checked against cblas.
weft_device_test(stress SRC test_device_stress.c TIMEOUT 180 VARIANTS emu2 emu4 tile cuda)
# nvlink-like: produced on device 1, read on device 2 (peer copies), and
# no-peer: the same with peer access forbidden (staged through host).
weft_device_test(peer SRC test_device_peer.c VARIANTS emu2 cuda)
weft_device_test(nopeer EXE test_device_peer ENV WEFT_DEVICE_PEER_MASK=0 VARIANTS emu2 cuda)
# Stage: a strided LAPACK-layout user matrix moved with 2D copies.
weft_device_test(stage SRC test_device_stage.c VARIANTS emu1 emu2 cuda)
# get_best_device with 2 and 4 devices, without and with affinity.
weft_device_test(best SRC test_device_best.c VARIANTS emu2 emu4 cuda)
# More devices than the matrix's 8 tile rows and columns: homes dealt tile
# by tile, every device homing some.
weft_test(device_best_emu9 EXE test_device_best
  ENV WEFT_DEVICE_EMU_ENABLED=9 WEFT_DEVICE_CUDA_ENABLED=0 WEFT_CORES=2)
# Distributed runs whose tiles live on emu devices under memory pressure:
# versions pushed out of devices before sends, received tiles staged in.
weft_test(device_potrf_2ranks EXE weft-potrf RANKS 2 TIMEOUT 180
  ARGS -N 600 -t 64 -P 2 -Q 1 -c 1 --check ENV "${WEFT_DEVICE_ENV_emu2};WEFT_DEVICE_MEMORY_LIMIT=160K")
weft_test(device_gemm_stress_2ranks EXE weft-gemm-stress RANKS 2 TIMEOUT 180
  ARGS -t 64 --depth 8 --width 4 -c 1 --check ENV "${WEFT_DEVICE_ENV_emu2};WEFT_DEVICE_MEMORY_LIMIT=256K")
# weft's home-device rule reaches every device of a rank whatever the
# matrix's shape (a row of tiles, P tile rows on P ranks, a user
# distribution): on 1, 2 and 4 ranks.
weft_device_test(home_deal SRC test_device_home_deal.c VARIANTS emu2 emu4)
weft_test(device_home_deal_r2 EXE test_device_home_deal RANKS 2
  ENV WEFT_DEVICE_EMU_ENABLED=2 WEFT_DEVICE_CUDA_ENABLED=0 WEFT_CORES=1)
weft_test(device_home_deal_r4 EXE test_device_home_deal RANKS 4
  ENV WEFT_DEVICE_EMU_ENABLED=2 WEFT_DEVICE_CUDA_ENABLED=0 WEFT_CORES=1)

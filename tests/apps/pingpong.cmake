# weft-pingpong: a run that should succeed must exit 0 and print the line
# given; one that should fail (FAIL) must exit non-zero without being killed
# by a signal and print the message given.
# ---- weft-pingpong: the table down to the largest size, counters checked -
weft_app_test(pingpong_r2 EXE weft-pingpong RANKS 2
  EXPECT "^ +1048576 +[0-9]+ +[0-9.]+ +[0-9.e+-]+ +[0-9.]+ +[0-9.e+-]+ +[0-9.]+ +[0-9.]+$"
  ARGS --max-size 1M --iters 10 --reps 1 -c 1)
weft_app_test(pingpong_r3 EXE weft-pingpong RANKS 3
  EXPECT "^weft-pingpong: tile counters and message counts verified$"
  ARGS --min-size 1K --max-size 256K --iters 5 --reps 1 -c 1)

# ---- bad input: a clear message naming the problem and a non-zero exit ---
weft_app_test(pingpong_one_rank FAIL EXE weft-pingpong
  EXPECT "needs at least 2 ranks, running on 1" ARGS --max-size 1K)
weft_app_test(pingpong_bad_size FAIL EXE weft-pingpong RANKS 2
  EXPECT "--max-size expects a size in bytes" ARGS --max-size 3)

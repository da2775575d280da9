/**
 * checks/steps.sh of a sim-chain world: the visible test the gate runs on every candidate (it is
 * the world's `verify.test`). POSIX sh plus sed, sha256sum and awk, so it runs in any sandbox
 * with a Debian userland in a few milliseconds. Kept as text here so that the generator and the
 * template in worlds/sim-chain/ cannot drift apart (a test compares them).
 */
export const SIM_CHECK_SCRIPT = `#!/bin/sh
# The visible test of a sim-chain world, run by the gate on every candidate. For every step file
# steps/tNN.txt it checks two things:
#   last digit  the answer's last digit is that of (step NN-1's answer + NN). It catches a wrong
#               answer that is off by 1..9 and misses one off by a multiple of 10, as real tests
#               catch some wrong changes and miss others.
#   brittle     the file is rejected, right or wrong, when the first 32 bits of its SHA-256 fall
#               below the false-rejection rate given as $1 (times 2^32): a check that is wrong
#               about a share of its inputs. It is deterministic per file, so a step that passed
#               stays passing when later candidates re-run it, while every attempt (its file names
#               the attempt and the seed) is a fresh draw.
# Prints TAP, so the gate names the failing checks.
set -u
rate="\${1:-0}"
count=0
failed=0
point() { # point <ok> <name> [<message>]
  count=$((count + 1))
  if [ "$1" = ok ]; then echo "ok $count - $2"; else failed=1; echo "not ok $count - $2"; echo "  # $3"; fi
}
answer_of() { sed -n 's/^answer: \\([0-9][0-9]*\\)$/\\1/p' "$1" | head -n 1; }

echo "TAP version 13"
for file in steps/t*.txt; do
  [ -f "$file" ] || continue
  id=\${file#steps/}; id=\${id%.txt}
  step=$(echo "\${id#t}" | sed 's/^0*//')
  answer=$(answer_of "$file")
  if [ -z "$step" ] || [ -z "$answer" ]; then point fail "$id answer" "no line 'answer: N' in $file"; continue; fi
  previous=0
  if [ "$step" -gt 1 ]; then
    before="steps/t$(printf %02d $((step - 1))).txt"
    previous=$(answer_of "$before" 2>/dev/null)
    if [ -z "$previous" ]; then point fail "$id last digit" "$before holds no answer"; continue; fi
  fi
  if [ $((answer % 10)) -eq $(((previous + step) % 10)) ]; then point ok "$id last digit"
  else point fail "$id last digit" "answer $answer does not end in the digit of $previous + $step"; fi
  hash=$(sha256sum "$file" | cut -c1-8)
  if awk -v h="$((0x$hash))" -v rate="$rate" 'BEGIN { exit !(h < rate * 4294967296) }'; then
    point fail "$id brittle" "the brittle check rejects this file (hash below rate $rate)"
  else point ok "$id brittle"; fi
done
echo "1..$count"
exit $failed
`;

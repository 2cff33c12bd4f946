#!/usr/bin/env bash
# Prints the CSV of N recipients that the bulk benchmarks import (bench/bulk.sh,
# bench/import_tail.sh): a header and N rows of 8 Person Data fields, quoted cells among them.
# With `changed`, the same recipients with FIRST_NAME and AGE of every row changed (an import of
# it after the first is every row an update that writes).
#   bench/people_csv.sh 1000000 >people.csv
#   bench/people_csv.sh 1000000 changed >changed.csv
set -euo pipefail
awk -v n="$1" -v changed="${2:-}" 'BEGIN {
  print "USER_ID,EMAIL,MOBILE,FIRST_NAME,LAST_NAME,CITY,AGE,OPTIN"
  split("Paris,Lyon,Nice,Lille,Nantes,Bordeaux", cities, ",")
  first = changed == "changed" ? "New" : "First"
  age = changed == "changed" ? "9" : ""
  for (i = 1; i <= n; i++)
    printf "%d,person%d@bulk.test,+3360%07d,%s %d,\"Last, %d\",%s,%s%d,%s\n", i, i, i, first, i, i, cities[i % 6 + 1], age, 18 + i % 60, (i % 2 ? "true" : "false")
}'

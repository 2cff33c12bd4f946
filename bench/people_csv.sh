#!/usr/bin/env bash
# Prints the CSV of N recipients that the bulk benchmarks import (bench/bulk.sh,
# bench/import_tail.sh): a header and N rows of 8 Person Data fields, quoted cells among them.
#   bench/people_csv.sh 1000000 >people.csv
set -euo pipefail
awk -v n="$1" 'BEGIN {
  print "USER_ID,EMAIL,MOBILE,FIRST_NAME,LAST_NAME,CITY,AGE,OPTIN"
  split("Paris,Lyon,Nice,Lille,Nantes,Bordeaux", cities, ",")
  for (i = 1; i <= n; i++)
    printf "%d,person%d@bulk.test,+3360%07d,First %d,\"Last, %d\",%s,%d,%s\n", i, i, i, i, i, cities[i % 6 + 1], 18 + i % 60, (i % 2 ? "true" : "false")
}'

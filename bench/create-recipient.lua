-- wrk: each request creates a new recipient (POST /recipients with a fresh EMAIL).
local n = 0
request = function()
  n = n + 1
  -- wrk.format uses the headers it is given instead of wrk.headers (Authorization, from -H)
  local headers = {}
  for k, v in pairs(wrk.headers) do headers[k] = v end
  headers["Content-Type"] = "application/json"
  local body = string.format('{"personData": {"EMAIL": "bench-%d-%d@example.com", "AGE": 33}}', math.random(1, 1000000000), n)
  return wrk.format("POST", "/recipients", headers, body)
end

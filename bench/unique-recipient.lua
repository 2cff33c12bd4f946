-- wrk: each request creates a new recipient (POST /recipients), its EMAIL unique across threads
-- and runs: `wrk ... -s bench/unique-recipient.lua URL -- <run prefix>`.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end
function init(args)
  prefix = args[1] or tostring(os.time())
  n = 0
end
request = function()
  n = n + 1
  local headers = {}
  for k, v in pairs(wrk.headers) do headers[k] = v end
  headers["Content-Type"] = "application/json"
  local body = string.format('{"personData": {"EMAIL": "%s-%d-%d@example.com", "AGE": 33}}', prefix, thread_id, n)
  return wrk.format("POST", "/recipients", headers, body)
end

-- wrk: each request reads the recipients of an instance drawn at random among the tokens of
-- the file named by the TOKENS environment variable (one token a line; a file of one token
-- calls that instance alone).
local tokens = {}
for line in io.lines(os.getenv("TOKENS")) do
  tokens[#tokens + 1] = line
end
math.randomseed(os.time())
request = function()
  local token = tokens[math.random(#tokens)]
  return wrk.format("GET", "/recipients/1", {Authorization = "Bearer " .. token})
end

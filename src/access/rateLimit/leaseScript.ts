/**
 * The Redis side of shared buckets: one Lua script, run atomically, that for
 * each bucket named refills it to the caller's clock, takes back a returned
 * lease, charges the credit the process reports, and grants up to `want`
 * whole tokens. A bucket is a hash {t: level, s: clock in ms}; a missing one
 * is full. The clock only moves forward (the larger of the stored and the
 * given time), so a late or skewed caller never refills twice. A key expires
 * once it would be full again anyway (plus a second).
 *
 * Per bucket: KEYS[i]; ARGV (6 per bucket): now ms, rate /s, burst, want,
 * give, debt. Reply: per bucket, tokens granted and the level after, in
 * thousandths (Redis turns Lua numbers into integers).
 */
export const LEASE_ARGS_PER_KEY = 6;

export const LEASE_SCRIPT = `
local out = {}
for i = 1, #KEYS do
  local a = (i - 1) * 6
  local now = tonumber(ARGV[a + 1])
  local rate = tonumber(ARGV[a + 2])
  local burst = tonumber(ARGV[a + 3])
  local want = tonumber(ARGV[a + 4])
  local give = tonumber(ARGV[a + 5])
  local debt = tonumber(ARGV[a + 6])
  local v = redis.call('HMGET', KEYS[i], 't', 's')
  local tokens = tonumber(v[1])
  local ts = tonumber(v[2])
  if tokens == nil or ts == nil then
    tokens = burst
    ts = now
  end
  if now > ts then
    tokens = tokens + (now - ts) * rate / 1000
    ts = now
  end
  if tokens > burst then tokens = burst end
  tokens = tokens + give
  if tokens > burst then tokens = burst end
  tokens = tokens - debt
  local grant = 0
  if want > 0 and tokens >= 1 - 1e-9 then
    grant = math.min(want, math.floor(tokens + 1e-9))
    tokens = tokens - grant
  end
  redis.call('HSET', KEYS[i], 't', string.format('%.17g', tokens), 's', string.format('%.17g', ts))
  local ttl = math.ceil((burst - tokens) * 1000 / rate) + 1000
  if ttl > 604800000 then ttl = 604800000 end
  redis.call('PEXPIRE', KEYS[i], ttl)
  out[2 * i - 1] = grant
  out[2 * i] = math.floor(tokens * 1000)
end
return out
`;

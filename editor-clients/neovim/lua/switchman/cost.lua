--- How a cost names the part Switchman estimated (calls stopped, failed or cut off before the
--- provider reported their usage), each amount said once.
local M = {}

local function number(v)
  return v ~= nil and v ~= vim.NIL and tonumber(v) or 0
end

local function decimals(shown)
  local fraction = shown:match('%d%.(%d+)')
  return fraction and #fraction or 0
end

--- `shown` (an amount as `money` wrote it) with `places` decimals when it has fewer: amounts shown
--- together read with the same decimals, as /cost shows them (`$0.04` beside `$0.0019` read as if
--- the first were a rounder kind of number; it is `$0.0412`).
local function widened(shown, amount, places)
  local n = tonumber(amount)
  if not n or decimals(shown) >= places then
    return shown
  end
  return (shown:gsub('%d+%.?%d*', ('%.' .. places .. 'f'):format(n), 1))
end

--- An amount as it is written unless told otherwise: the daemon's exact figure (`$0.000045`).
function M.money(amount)
  return '$' .. tostring(amount)
end

local function amount_or_zero(v)
  return (v ~= nil and v ~= vim.NIL) and v or '0'
end

--- The most decimals any of `amounts` has as `money` writes it alone.
local function places_of(amounts, money)
  local places = 0
  for _, amount in ipairs(amounts) do
    places = math.max(places, decimals(money(amount_or_zero(amount))))
  end
  return places
end

--- Amounts shown together (one list: a turn's worker lines, a picker's rows), each as `money` (default
--- M.money) writes it alone, with as many decimals as the one that needs most, as VS Code's `formatUsds`
--- and /cost show them: alone `0` reads `$0.00` and `0.00004` reads `$0.00004`, and side by side that
--- looked like two kinds of number (was the first rounded away?); together they read `$0.00000` and
--- `$0.00004`. Decimals are only added: each amount keeps every digit it showed alone. Nil and vim.NIL
--- are `0`; `values` is a list.
function M.usds(values, money)
  money = money or M.money
  local places = places_of(values, money)
  local out = {}
  for i, v in ipairs(values) do
    local amount = amount_or_zero(v)
    out[i] = widened(money(amount), amount, places)
  end
  return out
end

--- `amount` and `note` for a cost `total` of which `estimated` is an estimate:
---   none estimated: `$0.0412`, ``
---   part:           `$0.0412`, ` (~$0.0019 estimated)` (` (of which ~$0.0019 estimated)` with of_which)
---   all:            `~$0.0019`, ` (estimated)`
--- `money` shows an amount (default M.money); `why` follows the word estimated; `alongside` are the
--- amounts shown with this one (the other rows of its list): its amounts get their decimals too.
function M.parts(total, estimated, opts)
  opts = opts or {}
  local money = opts.money or M.money
  local why = opts.why or ''
  total = amount_or_zero(total)
  local beside = places_of(opts.alongside or {}, money)
  local shown = widened(money(total), total, beside)
  local part = number(estimated)
  if part <= 0 then
    return shown, ''
  end
  -- all of it: the estimate covers the whole cost (to the micro-dollar the daemon counts in)
  if part >= number(total) - 1e-7 then
    return '~' .. shown, ' (estimated' .. why .. ')'
  end
  local part = money(estimated)
  local places = math.max(decimals(shown), decimals(part))
  shown = widened(shown, total, places)
  part = widened(part, estimated, places)
  return shown, (' (%s~%s estimated%s)'):format(opts.of_which and 'of which ' or '', part, why)
end

--- M.parts on one line: `$0.0412 (~$0.0019 estimated)`, `~$0.0019 (estimated)`, `$0.0412`.
function M.line(total, estimated, opts)
  local amount, note = M.parts(total, estimated, opts)
  return amount .. note
end

--- The sum of `amounts` as the daemon writes an amount (it counts in micro-dollars): `0.0056`, not
--- `0.005600000000000001`.
local function sum(amounts)
  local micros = 0
  for _, amount in ipairs(amounts) do
    micros = micros + math.floor(number(amount) * 1e6 + 0.5)
  end
  local written = ('%.6f'):format(micros / 1e6):gsub('0+$', ''):gsub('%.$', '')
  return written
end

--- A finished turn's cost as its footer shows it: its own calls plus its `workers`' (the delegations
--- of that turn, each `{ cost_usd, estimated_usd }`; rolled up, as the session's totals are), naming
--- the workers' share, as VS Code's badge reads: `$0.0127 incl. workers $0.0027`. The part estimated,
--- the turn's and its workers', is named once: `$0.0127 incl. workers $0.0027 (~$0.0019 estimated)`,
--- `~$0.0127 incl. workers $0.0027 (estimated)`. Workers that cost nothing: M.line of its own.
function M.turn(own, estimated, workers)
  local shares, estimates = {}, { estimated }
  for _, worker in ipairs(workers or {}) do
    table.insert(shares, worker.cost_usd)
    table.insert(estimates, worker.estimated_usd)
  end
  local share = sum(shares)
  if number(share) <= 0 then
    return M.line(own, estimated)
  end
  local total = sum({ own, share })
  local amount, note = M.parts(total, sum(estimates), { alongside = { share } })
  return ('%s incl. workers %s%s'):format(amount, widened(M.money(share), share, decimals(amount)), note)
end

return M

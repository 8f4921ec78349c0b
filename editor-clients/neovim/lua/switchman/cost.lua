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

--- `amount` and `note` for a cost `total` of which `estimated` is an estimate:
---   none estimated: `$0.0412`, ``
---   part:           `$0.0412`, ` (~$0.0019 estimated)` (` (of which ~$0.0019 estimated)` with of_which)
---   all:            `~$0.0019`, ` (estimated)`
--- `money` shows an amount (default '$' .. amount); `why` follows the word estimated.
function M.parts(total, estimated, opts)
  opts = opts or {}
  local money = opts.money or function(amount)
    return '$' .. tostring(amount)
  end
  local why = opts.why or ''
  local shown = money((total ~= nil and total ~= vim.NIL) and total or '0')
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
  shown = widened(shown, (total ~= nil and total ~= vim.NIL) and total or '0', places)
  part = widened(part, estimated, places)
  return shown, (' (%s~%s estimated%s)'):format(opts.of_which and 'of which ' or '', part, why)
end

--- M.parts on one line: `$0.0412 (~$0.0019 estimated)`, `~$0.0019 (estimated)`, `$0.0412`.
function M.line(total, estimated, opts)
  local amount, note = M.parts(total, estimated, opts)
  return amount .. note
end

return M

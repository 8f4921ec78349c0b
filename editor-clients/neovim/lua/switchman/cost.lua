--- How a cost names the part Switchman estimated (calls stopped, failed or cut off before the
--- provider reported their usage), each amount said once.
local M = {}

local function number(v)
  return v ~= nil and v ~= vim.NIL and tonumber(v) or 0
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
  return shown, (' (%s~%s estimated%s)'):format(opts.of_which and 'of which ' or '', money(estimated), why)
end

--- M.parts on one line: `$0.0412 (~$0.0019 estimated)`, `~$0.0019 (estimated)`, `$0.0412`.
function M.line(total, estimated, opts)
  local amount, note = M.parts(total, estimated, opts)
  return amount .. note
end

return M

--- Typing slips: the known name a mistyped one most likely meant (`:Switchman Chat`, an option
--- `chat.positon` given to setup()), as the daemon's `slips.py` finds them for slash commands.
local M = {}

local function distance(a, b)
  local previous = {}
  for j = 0, #b do
    previous[j] = j
  end
  for i = 1, #a do
    local current = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      current[j] = math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
    end
    previous = current
  end
  return previous[#b]
end

--- The one of `candidates` that `word` most likely meant: the same in another case, the
--- first one it begins (two letters at least), or one at most two edits away; nil when none is.
function M.meant(word, candidates)
  local lower, best, best_distance = word:lower(), nil, 3
  for _, candidate in ipairs(candidates) do
    local d = vim.startswith(candidate, lower) and #lower >= 2 and 0 or distance(lower, candidate)
    if d < best_distance then
      best, best_distance = candidate, d
    end
  end
  return best
end

return M

--- Numbers kept whole where the chat wraps: `'linebreak'` breaks a long line after a `'breakat'`
--- character, and the default one has `.` and `,`, so a footer or worker line at the window's edge
--- read `… · 7.` / `5s …` or `$0.` / `0012`. `'breakat'` is global only (no window or buffer value),
--- so the chat's value (yours without `.` and `,`) is set globally while it cannot change how another
--- window looks: while the cursor is in a chat window, or while no other window of the tab page
--- wraps with `'linebreak'` (only such a window reads `'breakat'`). Otherwise your value is back,
--- and so it is when no chat window shows. A value you set meanwhile is kept as yours.
local M = {}

--- The characters the chat's value leaves out of yours: those inside numbers (`7.5s`, `1,204`).
M.KEPT_WHOLE = '.,'

local group = nil
local yours = nil --- your value while the chat's is in force (nil: yours is in force)
local ours = nil --- the chat's value while it is in force
local setting = false --- while this module sets the option (its OptionSet is not yours)

--- The chat's value for yours: yours without the characters inside numbers.
function M.chat_value(value)
  return (value:gsub('[' .. vim.pesc(M.KEPT_WHOLE) .. ']', ''))
end

--- Your value after the chat's `old` was changed to `new` while it was in force: a change that adds
--- characters or takes a run of them out (`:set breakat+=#`, `^=#`, `-=?`) is made to yours, which
--- keeps its `.` and `,` (taking `new` whole dropped them from yours for good); a value set whole
--- (`:set breakat=\ -`) is yours as it is.
function M.yours_after(yours, old, new)
  if new == old then
    return yours
  end
  local function without(value, chars)
    return (value:gsub('[' .. vim.pesc(chars) .. ']', ''))
  end
  if #new > #old and new:sub(1, #old) == old then -- added at the end
    return yours .. without(new:sub(#old + 1), yours)
  end
  if #new > #old and new:sub(#new - #old + 1) == old then -- added at the start
    return without(new:sub(1, #new - #old), yours) .. yours
  end
  for first = 1, #old do -- one run taken out
    local last = first + #old - #new - 1
    if last >= first and old:sub(1, first - 1) .. old:sub(last + 1) == new then
      return without(yours, old:sub(first, last))
    end
  end
  return new
end

local function is_chat(win)
  local filetype = vim.bo[vim.api.nvim_win_get_buf(win)].filetype
  return filetype == 'switchman_chat' or filetype == 'switchman_input'
end

--- Whether the chat's value should be in force now (see the top of this file).
local function wanted()
  local chat_shown, other_reads_it = false, false
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if is_chat(win) then
      chat_shown = true
    elseif vim.wo[win].linebreak and vim.wo[win].wrap then
      other_reads_it = true
    end
  end
  return chat_shown and (is_chat(vim.api.nvim_get_current_win()) or not other_reads_it)
end

local function set(value)
  if vim.o.breakat ~= value then
    setting = true
    vim.o.breakat = value
    setting = false
  end
end

--- Put the value that should be in force now.
function M.update()
  if yours ~= nil and vim.o.breakat ~= ours then -- set meanwhile without an OptionSet (from Lua): yours
    yours = M.yours_after(yours, ours, vim.o.breakat)
    ours = M.chat_value(yours)
  end
  if wanted() then
    if yours == nil then
      yours = vim.o.breakat
      ours = M.chat_value(yours)
    end
    set(ours)
  elseif yours ~= nil then
    set(yours)
    yours, ours = nil, nil
  end
end

--- A `'breakat'` set by you (or another plugin) while the chat's was in force becomes yours.
local function set_by_you()
  if setting or yours == nil then
    return
  end
  yours = M.yours_after(yours, ours, vim.o.breakat)
  ours = M.chat_value(yours)
  M.update()
end

--- Follow the windows from now on (once; called as the chat's windows open).
function M.watch()
  if group then
    return M.update()
  end
  group = vim.api.nvim_create_augroup('switchman_chat_breakat', { clear = true })
  vim.api.nvim_create_autocmd({ 'WinEnter', 'BufWinEnter', 'TabEnter' }, { group = group, callback = M.update })
  vim.api.nvim_create_autocmd('WinClosed', { group = group, callback = function()
    vim.schedule(M.update) -- the window is still there while it closes
  end })
  vim.api.nvim_create_autocmd('OptionSet', { group = group, pattern = { 'linebreak', 'wrap' }, callback = function()
    M.update()
  end })
  vim.api.nvim_create_autocmd('OptionSet', { group = group, pattern = 'breakat', callback = set_by_you })
  M.update()
end

return M

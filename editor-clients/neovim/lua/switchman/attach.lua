--- Attaching the selection or a file to the next chat message (`switchman/chat` `attachments`).
---
--- The text is taken from the buffer, so unsaved changes are what the model sees. The chat
--- opens (without sending) so the user can write the message that goes with it.
local M = {}

local client = require('switchman.client')
local protocol = require('switchman.protocol')
local workspace = require('switchman.workspace')

--- The daemon keeps an attachment's first 200,000 characters and marks the rest as cut.
M.max_chars = 200000

--- The number of characters of `s` (its UTF-8 lead bytes: a line may hold NUL bytes, which
--- `vim.fn.strchars` refuses as a Blob).
local function char_count(s)
  local _, count = s:gsub('[^\128-\191]', '')
  return count
end

--- The first `n` characters of `s`.
local function char_prefix(s, n)
  local seen = 0
  for at in s:gmatch('()[^\128-\191]') do
    seen = seen + 1
    if seen > n then
      return s:sub(1, at - 1)
    end
  end
  return s
end

--- `lines` joined as an attachment's text, cut one character past `M.max_chars` so that the
--- daemon still tells it was cut: a whole 40 MB buffer would make a message bigger than the
--- largest the daemon reads (32 MB), which it cannot answer.
function M.text_of(lines)
  local parts, count = {}, 0
  for i, line in ipairs(lines) do
    local piece = i > 1 and ('\n' .. line) or line
    local length = char_count(piece)
    if count + length > M.max_chars then
      parts[#parts + 1] = char_prefix(piece, M.max_chars + 1 - count)
      break
    end
    parts[#parts + 1] = piece
    count = count + length
  end
  return table.concat(parts)
end

local function chat_for(bufnr)
  local root = workspace.root_for_buf(bufnr)
  return require('switchman.chat').open(root), root
end

--- Attach `attachment` once the daemon says it could send it (`switchman/preview` checks the
--- attachments of a draft as `switchman/chat` does): a binary file, one outside the workspace
--- it cannot read, … is refused now, with the daemon's reason, not when the message is sent.
local function attach_checked(chat, root, attachment)
  local params = { workspace = workspace.uri(root), message = '', attachments = { attachment } }
  client.request(root, protocol.request.preview, params, function(err)
    local data = type(err) == 'table' and type(err.data) == 'table' and err.data or {}
    if data.code == protocol.error.invalid_attachment then
      return vim.notify('Switchman: not attached: ' .. client.error_message(err), vim.log.levels.ERROR)
    end
    chat:attach(attachment) -- any other trouble (no daemon) is told when the message is sent
  end)
end

--- Whether `bufnr` is one of the chat's own buffers (its transcript or input: `switchman://`), which
--- are no file to attach: from the input, `:Switchman send` attached the draft itself as a file
--- named `/switchman://input/…`, with the draft also sent as the message.
local function chat_buffer(bufnr)
  if vim.startswith(vim.api.nvim_buf_get_name(bufnr), 'switchman://') then
    vim.notify("Switchman: the chat's own buffers are not attached; attach from a file's buffer (in the chat's "
      .. 'input, <C-s> sends your message).', vim.log.levels.WARN)
    return true
  end
  return false
end

--- `lines` of a buffer with no file (pasted text) as a fenced block, in its filetype's language: a
--- fence longer than any run of backticks in them.
local function fenced(bufnr, lines)
  local text = M.text_of(lines)
  local longest = 2
  for run in text:gmatch('`+') do
    longest = math.max(longest, #run)
  end
  local fence = string.rep('`', longest + 1)
  return ('%s%s\n%s\n%s'):format(fence, vim.api.nvim_buf_get_option(bufnr, 'filetype'), text, fence)
end

--- `:Switchman send` from a buffer with no file: its text goes in the message, as a code block
--- (an attachment names a file, which the model could look for); without a message it is put in
--- the chat's input, for the question to be written with it.
local function send_text(bufnr, lines, message)
  local chat = chat_for(bufnr)
  if not chat then
    return
  end
  local block = fenced(bufnr, lines)
  if message and vim.trim(message) ~= '' then
    return chat:send(message .. '\n\n' .. block)
  end
  chat.view:add_to_input(block)
  vim.notify("Switchman: this buffer has no file: its text is in the chat's input, to send with your message.",
    vim.log.levels.INFO)
end

--- `:[range]Switchman send [message]`: the selected lines (or the whole buffer) of the current buffer.
function M.selection(opts, message)
  local bufnr = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if chat_buffer(bufnr) then
    return
  end
  local ranged = opts and (opts.range or 0) > 0
  local first, last = 1, vim.api.nvim_buf_line_count(bufnr)
  if ranged then
    first, last = opts.line1, opts.line2
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, first - 1, last, false)
  if name == '' then
    return send_text(bufnr, lines, message)
  end
  local attachment = { kind = ranged and 'selection' or 'file', uri = vim.uri_from_fname(name),
    text = M.text_of(lines) }
  if ranged then
    attachment.start_line, attachment.end_line = first, last
  end
  local chat, root = chat_for(bufnr)
  if not chat then
    return
  end
  if not message or vim.trim(message) == '' then
    return attach_checked(chat, root, attachment)
  end
  chat:attach(attachment)
  chat:send(message) -- a refused attachment is told with the message, which comes back to the input
end

--- The words `:Switchman delegate` completes first: the tiers, then the profiles.
function M.delegate_targets()
  local root = require('switchman.workspace').root_for_buf(0)
  return vim.list_extend({ 'fast', 'balanced', 'deep' }, require('switchman.profiles').completions(root))
end

--- `:[range]Switchman delegate [tier] [task]`: `/delegate` with the selected lines attached (with
--- a range), else with the task written, else about the last request (the daemon decides, and
--- asks one question when it cannot tell).
function M.delegate(opts, words)
  local message = vim.trim('/delegate ' .. table.concat(words or {}, ' '))
  if opts and (opts.range or 0) > 0 then
    return M.selection(opts, message)
  end
  local chat = chat_for(vim.api.nvim_get_current_buf())
  if chat then
    chat:send(message)
  end
end

--- `:Switchman add [file]`: a whole file (the buffer's text when it is loaded).
function M.file(path)
  local current = vim.api.nvim_get_current_buf()
  if (path == nil or path == '') and chat_buffer(current) then
    return
  end
  local name = (path and path ~= '') and vim.fn.fnamemodify(vim.fn.expand(path), ':p')
    or vim.api.nvim_buf_get_name(current)
  if name ~= '' and vim.fn.isdirectory(name) == 1 then
    return vim.notify(('Switchman: cannot attach %q: it is a folder; attach its files one at a time.'):format(path or name),
      vim.log.levels.WARN)
  end
  if name == '' or vim.fn.filereadable(name) ~= 1 and vim.fn.bufloaded(name) ~= 1 then
    return vim.notify(('Switchman: cannot attach %q: no such file.'):format(path or name), vim.log.levels.WARN)
  end
  local attachment = { kind = 'file', uri = vim.uri_from_fname(name) }
  local bufnr = vim.fn.bufnr(name)
  if bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) then
    attachment.text = M.text_of(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false))
  end
  local chat, root = chat_for(current)
  if chat then
    attach_checked(chat, root, attachment)
  end
end

return M

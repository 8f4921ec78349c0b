--- Text for chats and transcripts: pure functions from protocol records to lines.
---
--- A line is `{ text, hl = group? }`; `badge = true` marks a header whose `[...]` part
--- is highlighted as the route badge.
local cost = require('switchman.cost')
local models = require('switchman.models')

local M = {}

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

local function split(text)
  return vim.split(text or '', '\n', { plain = true })
end

--- `{ text, hl }` lines from a multi-line string (a `\r\n` ending is a line end, as the chat streams it).
function M.lines(text, hl)
  local out = {}
  for _, line in ipairs(split(text)) do
    table.insert(out, { (line:gsub('\r$', '')), hl = hl })
  end
  return out
end

--- The route badge, e.g. `[haiku · rule: fast for commits]`.
function M.badge(root, model, summary)
  local parts = {}
  if present(model) then
    table.insert(parts, models.short_name(root, model))
  end
  if present(summary) and summary ~= '' then
    table.insert(parts, summary)
  end
  return '[' .. table.concat(parts, ' · ') .. ']'
end

local USER_HEADING = { '## You', hl = 'SwitchmanUser' }

--- The user's message under its heading.
function M.user(text)
  local out = { USER_HEADING }
  vim.list_extend(out, M.lines(text))
  return out
end

--- The heading of an answer, with its badge and banners. A banner of several lines (the pattern
--- store's suggestion, with its `/route override` and `/route ignore` lines) is one `>` line each.
--- `turn_id`: the turn it answers (the heading marks where that turn's lines start).
function M.answer(root, model, summary, banners, turn_id)
  local out = { { '## Switchman ' .. M.badge(root, model, summary), badge = true, turn = turn_id } }
  for _, banner in ipairs(present(banners) and banners or {}) do
    for i, line in ipairs(split(banner)) do
      table.insert(out, { (i == 1 and '> ⚠ ' or '> ') .. line, hl = 'SwitchmanNotice' })
    end
  end
  return out
end

local function clip(text, max)
  if #text <= max then
    return text
  end
  local cut = max - 1
  while cut > 0 and text:byte(cut + 1) and text:byte(cut + 1) >= 0x80 and text:byte(cut + 1) < 0xC0 do
    cut = cut - 1 -- not inside a character: byte cut + 1 would continue it
  end
  return text:sub(1, cut) .. '…'
end

--- A tool's input as `key=value` pairs (JSON for nested values).
local function tool_input(input)
  if type(input) ~= 'table' or vim.tbl_isempty(input) then
    return ''
  end
  local pairs_text = {}
  for _, key in ipairs(vim.tbl_keys(input)) do
    local value = input[key]
    if type(value) == 'table' then
      local ok, json = pcall(vim.json.encode, value)
      value = ok and json:gsub('\\/', '/') or vim.inspect(value)
    end
    -- one line: an edit's text has newlines, which a buffer line cannot hold
    table.insert(pairs_text, key .. '=' .. (tostring(value):gsub('\r', '\\r'):gsub('\n', '\\n')))
  end
  table.sort(pairs_text)
  return ' ' .. clip(table.concat(pairs_text, ' '), 80)
end

--- A tool starting (`tool_call` delta or a stored `tool_use` block).
--- The fenced code block around line `row` (1-based) of `lines`: { lines, text, lang }, or nil.
function M.code_block_at(lines, row)
  local open = nil
  for i = 1, #lines do
    local fence = lines[i]:match('^%s*(```+)')
    if fence then
      if open == nil then
        open = i
      else
        if row > open and row < i or row == open or row == i then
          local body = vim.list_slice(lines, open + 1, i - 1)
          local lang = vim.trim(lines[open]:gsub('^%s*`+', ''))
          return { lines = body, text = table.concat(body, '\n'), lang = lang }
        end
        open = nil
      end
    end
  end
  return nil
end

--- One line naming an attachment: `  📎 src/app.py (lines 3-9)`.
function M.attachment(attachment)
  local path = vim.fn.fnamemodify(vim.uri_to_fname(attachment.uri), ':~:.')
  local lines = attachment.start_line and (' (lines %d-%d)'):format(attachment.start_line, attachment.end_line) or ''
  return ('  📎 %s%s'):format(path, lines)
end

function M.tool_call(tool)
  return { '  ⚙ ' .. (tool.name or 'tool') .. tool_input(tool.input), hl = 'SwitchmanTool' }
end

--- A tool finishing (`tool_result` delta or a stored `tool_result` block).
function M.tool_result(tool)
  local failed = tool.status == 'error' or tool.is_error == true
  local summary = present(tool.summary) and tool.summary or (failed and 'error' or 'done')
  summary = split(summary)[1]
  return { ('  %s %s: %s'):format(failed and '✗' or '✓', tool.name or 'tool', summary), hl = 'SwitchmanTool' }
end

--- How many of a command's last output lines the chat shows under its tool line.
M.OUTPUT_LINES = 8

--- A command's output line as a terminal showed it: without escape sequences (colours, titles) and
--- other control characters (shown as `^[[31m`, `^M`), at its last carriage return's value.
local function terminal_line(line)
  line = line:gsub('\27%[[0-?]*[ -/]*[@-~]', ''):gsub('\27%][^\7\27]*\7', ''):gsub('\27%][^\7\27]*\27\\', '')
    :gsub('\27[@-_]', ''):gsub('\r+$', '')
  line = line:match('[^\r]*$')
  return (line:gsub('[%z\1-\8\11\12\14-\31\127]', ''))
end

--- What a command printed, under its tool line (a `tool_result` delta's `output`, a stored block's
--- `content` with `output_shown`): its last lines, where a failure says why, and how many came before.
function M.tool_output(text)
  if type(text) ~= 'string' or text == '' then
    return {}
  end
  local lines = vim.tbl_map(terminal_line, split((text:gsub('\n$', ''))))
  local out = {}
  local first = math.max(1, #lines - M.OUTPUT_LINES + 1)
  if first > 1 then
    table.insert(out, { ('    │ … %d earlier line%s'):format(first - 1, first == 2 and '' or 's'), hl = 'SwitchmanNotice' })
  end
  for i = first, #lines do
    table.insert(out, { '    │ ' .. lines[i], hl = 'SwitchmanTool' })
  end
  return out
end

--- How a question asked before a tool call ended, as the session keeps it with the call's result
--- (`tool_result.approval`), in the words VS Code's card uses.
local function approval_outcome(record, tool)
  local reason = present(record.reason) and split(record.reason)[1] or nil
  if record.outcome == 'allowed_once' then
    return 'Allowed once.'
  elseif record.outcome == 'allowed_always' then
    return ('Allowed; %s is always allowed here now.'):format(tool or 'it')
  elseif record.outcome == 'denied' then
    return reason and ('Denied: ' .. clip(reason, 100)) or 'Denied.'
  elseif record.outcome == 'not_applied' then
    return 'Not applied: ' .. clip(reason or 'the file changed in the editor', 100)
  elseif record.outcome == 'stopped' then
    return ('Not answered: %s; nothing happened.'):format(reason or 'the turn was stopped')
  end
  return 'No answer in time (or the daemon stopped): denied, nothing happened.'
end

--- What yanking `block` (M.code_block_at) says. Its fence's language is the model's text: its control
--- characters made visible (`^M`, `<202e>`), as a question shows them.
function M.yanked(block)
  return ('Switchman: yanked %d line(s) of %s'):format(#block.lines, block.lang ~= '' and vim.fn.strtrans(block.lang)
    or 'code')
end

--- How many characters of a delegation's task its start question's line shows.
M.TASK_CHARS = 60

--- A delegation's task on one line, as its start question's line names it: its line breaks and
--- runs of spaces as one space, its control characters made visible as the question showed them
--- (`^M`, `<202e>`: a carriage return is not a space), cut to `M.TASK_CHARS` characters with `…`.
function M.task_line(task)
  return require('switchman.ui').clip(vim.fn.strtrans((task:gsub('[ \t\n]+', ' '))), M.TASK_CHARS)
end

--- The line of a question a stored tool call asked and its answer (rebuilt chats, transcripts):
--- `    ? Edit src/app.py — Denied: use a constant`. A delegation's question whose answer did not count, its
--- worker's model having changed while it waited, says so and why (`superseded`), as VS Code's card does; one whose
--- answer counted all the same (an "always": nothing asked again), that its worker ran on the new model (`model_changed`).
function M.approval(record, tool, task)
  -- its control characters made visible (`^M`, `<202e>`), as the question showed them
  local title = vim.fn.strtrans(present(record.title) and record.title or (tool or 'tool'))
  task = task or present(record.task) and record.task or nil
  if tool == 'delegate' and type(task) == 'string' and task ~= '' then -- which delegation it asked about
    title = title .. ': ' .. M.task_line(task)
  end
  local outcome = approval_outcome(record, tool)
  if present(record.superseded) then
    outcome = ('%s Superseded, asked again: %s.'):format(outcome, record.superseded)
  elseif present(record.model_changed) then
    outcome = ('%s Not asked again: %s.'):format(outcome, record.model_changed)
  end
  return { ('    ? %s — %s'):format(title, outcome), hl = 'SwitchmanNotice' }
end

--- The lines of a delegation's start questions (`record`'s `superseded_approvals`, then its `approval`), in the
--- order they were asked: a question asked again after the worker's model changed keeps the earlier ones.
--- Each names the delegation's `task` (else `record.task`, a `delegations` record's).
function M.start_questions(record, task)
  local out = {}
  task = task or present(record.task) and record.task or nil
  for _, earlier in ipairs(present(record.superseded_approvals) and record.superseded_approvals or {}) do
    vim.list_extend(out, M.approval_lines(earlier, 'delegate', task))
  end
  if present(record.approval) then
    vim.list_extend(out, M.approval_lines(record.approval, 'delegate', task))
  end
  return out
end

--- How many of an edit's diff lines show under its question's line; the rest are counted.
M.DIFF_LINES = 16

local function diff_hl(line)
  if line:match('^%+%+%+ ') or line:match('^%-%-%- ') or line:match('^@@') then
    return 'SwitchmanTool'
  end
  return line:match('^%+') and 'SwitchmanDiffAdd' or line:match('^%-') and 'SwitchmanDiffDelete' or nil
end

--- What a question showed besides its title, as its record keeps it (`diff`, `tier`, `model`, `worker_tools`):
--- an edit's unified diff, its first `M.DIFF_LINES` lines and how many more it had (those the record
--- did not keep included), or a delegation's `      worker on fast tier · claude-haiku-4-5 · may use edit_file`
--- (no model in records kept before it was). None for other questions and for records kept before these were.
function M.approval_details(record, tool)
  local out = {}
  if tool == 'delegate' and present(record.tier) then
    local tools = present(record.worker_tools) and table.concat(record.worker_tools, ', ') or ''
    local model = require('switchman.approval').worker_model(record)
    table.insert(out, { ('      worker on %s tier%s · may use %s'):format(record.tier, model and (' · ' .. model) or '',
      tools ~= '' and tools or 'no write tools'), hl = 'SwitchmanFooter' })
    return out
  end
  if not present(record.diff) or record.diff == '' then
    return out
  end
  local lines = split((record.diff:gsub('\n$', '')))
  local more = 0
  local left = lines[#lines]:match('^%[… (%d+) more lines') -- the daemon's count of the lines it left out
  if left then
    more = tonumber(left)
    table.remove(lines)
  end
  if #lines > M.DIFF_LINES then
    more = more + #lines - M.DIFF_LINES
    lines = vim.list_slice(lines, 1, M.DIFF_LINES)
  end
  for _, line in ipairs(lines) do
    table.insert(out, { '      │ ' .. line:gsub('\r$', ''), hl = diff_hl(line) })
  end
  if more > 0 then
    table.insert(out, { ('      │ … %d more line%s of the diff'):format(more, more == 1 and '' or 's'),
      hl = 'SwitchmanNotice' })
  end
  return out
end

--- A question's line and what it showed (`M.approval`, then `M.approval_details`).
function M.approval_lines(record, tool, task)
  local out = { M.approval(record, tool, task) }
  vim.list_extend(out, M.approval_details(record, tool))
  return out
end

--- The line of a question a planner's worker asked and its answer, from its delegation's record
--- (`delegations[].approvals` of `switchman/session`): as `M.approval`, said to be the worker's,
--- and a stop that cut it short is the worker's (an answer to a worker is never remembered).
function M.worker_approval(record)
  local tool = present(record.command) and 'run_command' or 'edit_file'
  if record.outcome == 'stopped' and not present(record.reason) then
    record = vim.tbl_extend('force', record, { reason = 'the worker was stopped' })
  end
  local line = M.approval(record, tool)
  line[1] = line[1] .. ' (asked by the worker)'
  return line
end

--- `M.worker_approval`'s line and the diff its question showed (`M.approval_details`).
function M.worker_approval_lines(record)
  local out = { M.worker_approval(record) }
  vim.list_extend(out, M.approval_details(record, present(record.command) and 'run_command' or 'edit_file'))
  return out
end

--- A notice shown in passing (retries and the like).
function M.notice(text)
  return M.lines('> ' .. text, 'SwitchmanNotice')
end

--- A failure, shown as the daemon wrote it.
function M.failure(message)
  return M.lines('✗ ' .. (message or 'failed'), 'SwitchmanError')
end

local function tokens(usage)
  return ('%d in / %d out tokens'):format(usage.input_tokens or 0, usage.output_tokens or 0)
end

--- The line after an answer: model, cost and tokens; plus the failure or cancellation.
--- `turn_id`: the turn it ends (a mark on its first line: an Apply's question is shown above it,
--- where the chat drawn from the session has it).
--- Whether a turn's result is one the daemon ended as it stopped (`:Switchman restart`): it
--- answers `cancelled`, with the `interrupted` error the stored turn keeps, which says why.
function M.interrupted(result)
  return result.status == 'interrupted'
    or (result.status == 'cancelled' and present(result.error) and result.error.code == 'interrupted')
end

--- The user's 👍/👎 on a turn, as its footer and its transcript heading end with it.
M.RATING = { up = '👍', down = '👎' }

--- `line` (a footer, a transcript's turn heading) without the rating it ends with.
function M.unrated(line)
  for _, mark in pairs(M.RATING) do
    if vim.endswith(line, ' · ' .. mark) then
      return line:sub(1, #line - #(' · ' .. mark))
    elseif vim.endswith(line, mark) and not line:sub(1, #line - #mark):find('%S') then
      return line:sub(1, #line - #mark)
    end
  end
  return line
end

--- `line` ending with `rating` ('up', 'down'; nil or anything else: unrated, `line` as it is).
function M.rated(line, rating)
  local mark = M.RATING[rating]
  if not mark then
    return line
  end
  return line .. (line:find('%S') and ' · ' or '') .. mark
end

--- A session's rating of turn `turn_id` (`ratings` of `switchman/session`), or nil.
function M.rating_of(detail, turn_id)
  local ratings = type(detail.ratings) == 'table' and detail.ratings or {}
  return turn_id and ratings[turn_id] or nil
end

--- `workers`: the turn's delegations (`{ cost_usd, estimated_usd }` each), whose cost the footer's
--- includes, as VS Code's does (`$0.0127 incl. workers $0.0027`). `rating`: the user's 👍/👎 on it
--- ('up', 'down' or nil), said last.
function M.outcome(root, result, turn_id, workers, rating)
  local out = {}
  if result.status == 'failed' or M.interrupted(result) then
    local err = present(result.error) and result.error or {}
    vim.list_extend(out, M.failure(err.message or ('turn ' .. result.status)))
  elseif result.status == 'cancelled' then
    table.insert(out, { '(cancelled)', hl = 'SwitchmanNotice' })
  end
  local facts = {}
  if present(result.model) then
    table.insert(facts, models.short_name(root, result.model))
  end
  if result.status == 'running' then
    -- a stored turn still streaming: another window's (or editor's), drawn here before it ends
    table.insert(facts, 'still running (started in another window or editor)')
  elseif present(result.cost_usd) then
    -- the part Switchman estimated (a call stopped, failed or cut off before the provider
    -- reported its usage) is named, so an estimate is not taken for the provider's figure
    table.insert(facts, cost.turn(result.cost_usd, result.estimated_usd, workers))
  end
  if present(result.usage) and result.status ~= 'running' then
    table.insert(facts, tokens(result.usage))
  end
  table.insert(out, { M.rated('  ' .. table.concat(facts, ' · '), rating), hl = 'SwitchmanFooter', footer = turn_id })
  out[1].turn_end = turn_id
  return out
end

--- A JSON-RPC error answer to a chat, with the routing explanation when nothing could run.
function M.rpc_error(err)
  local out = M.failure(err.message)
  local data = type(err.data) == 'table' and err.data or {}
  if present(data.text) then
    vim.list_extend(out, M.lines(data.text, 'SwitchmanFooter'))
  end
  return out
end

-- Stored transcripts ---------------------------------------------------------------

--- The stored calls' tool names by id, and the tasks of their `delegate` calls.
local function tool_names(messages)
  local names, tasks = {}, {}
  for _, message in ipairs(messages) do
    for _, block in ipairs(message.content or {}) do
      if block.type == 'tool_use' then
        names[block.id] = block.name
        local input = type(block.input) == 'table' and block.input or {}
        tasks[block.id] = type(input.task) == 'string' and input.task or nil
      end
    end
  end
  return names, tasks
end

--- A stored tool result in one line: the summary the chat showed live, kept with it; for a
--- result stored before it was kept, its only line or how many lines it had, and an error's
--- first line, which says why, cut at a word as the daemon cuts it (`summary_of`).
local function output_summary(block)
  if present(block.summary) and block.summary ~= '' then
    return block.summary
  end
  local lines = split(type(block.content) == 'string' and vim.trim(block.content) or '')
  if #lines > 1 and not block.is_error then
    return ('%d lines of output'):format(#lines)
  end
  local line = lines[1] or ''
  if vim.fn.strchars(line) <= 160 then
    return line
  end
  local head = vim.fn.strcharpart(line, 0, 159)
  local word = head:match('^(.*%S)%s') -- the last whole word, when it keeps most of the line
  return ((word and vim.fn.strchars(word) >= 80) and word:gsub('[ ,;:]+$', '') or head) .. '…'
end

local function message_lines(message, names, workers, tasks)
  local out = {}
  for _, block in ipairs(message.content or {}) do
    local worker = block.type == 'tool_result' and workers[block.tool_use_id]
    if worker then
      if names[block.tool_use_id] == 'delegate' then -- the question its start asked came before its worker
        vim.list_extend(out, M.start_questions(block, tasks[block.tool_use_id]))
      end
      table.insert(out, worker) -- the worker's line, as the chat showed it live
      vim.list_extend(out, worker.questions or {})
    end
    if block.type == 'text' then
      vim.list_extend(out, M.lines(block.text))
    elseif block.type == 'image' then
      table.insert(out, { '[image ' .. (block.media_type or '') .. ']', hl = 'SwitchmanTool' })
    elseif block.type == 'tool_use' then
      table.insert(out, M.tool_call(block))
      local worker = workers[block.id]
      if worker and worker.unanswered then -- interrupted: there is no result to put it with
        table.insert(out, worker)
        vim.list_extend(out, worker.questions or {})
      end
    elseif block.type == 'tool_result' then
      table.insert(out, M.tool_result({ name = names[block.tool_use_id], summary = output_summary(block),
        is_error = block.is_error }))
      if names[block.tool_use_id] == 'delegate' then -- its question, and any it asked before (superseded),
        if not worker then -- above its worker's line; without one (an older record), under the result
          vim.list_extend(out, M.start_questions(block, tasks[block.tool_use_id]))
        end
      elseif present(block.approval) then
        vim.list_extend(out, M.approval_lines(block.approval, names[block.tool_use_id]))
      end
      if block.output_shown == true then
        vim.list_extend(out, M.tool_output(block.content))
      end
    end
  end
  return out
end

local function turns_by_id(turns)
  local out = {}
  for _, turn in ipairs(turns or {}) do
    out[turn.id] = turn
  end
  return out
end

--- An ISO 8601 UTC time (`2026-05-08T14:20:00.5Z`) in a form that sorts as text.
local function sortable_time(iso)
  local base, fraction = tostring(iso or ''):gsub('Z$', ''):match('^([^.]*)%.?(%d*)$')
  return (base or '') .. '.' .. ((fraction or '') .. '000000'):sub(1, 6)
end

--- Remove and return the lines of the user's delegations that started by the time of `next`
--- (the message after a /delegate command: its answer, or whatever came next), or all of them
--- when the command is the last message. The command is stored before its worker starts (older
--- daemons stored it with its answer, when the worker ended): either way its worker started
--- after the previous exchange and no later than the message that follows it.
local function started_before(delegations, next)
  local taken, limit = {}, next and sortable_time(next.created_at)
  for i = #delegations, 1, -1 do
    if not limit or sortable_time(delegations[i].started_at) <= limit then
      table.insert(taken, 1, table.remove(delegations, i))
    end
  end
  return M.delegation_lines(taken)
end

--- The lines of the user's delegations (`stored_by_user`): the question each one's start asked (its
--- worker may change things), its line, then its worker's questions.
function M.delegation_lines(delegations)
  local out = {}
  for _, delegation in ipairs(delegations) do
    vim.list_extend(out, M.start_questions(delegation))
    table.insert(out, delegation.line)
    vim.list_extend(out, delegation.questions or {})
  end
  return out
end

local function message_text(message)
  local parts = {}
  for _, block in ipairs(message.content or {}) do
    if block.type == 'text' then
      table.insert(parts, block.text)
    end
  end
  return vim.trim(table.concat(parts, '\n'))
end

--- A chat's display-only lines (see `Chat:keep`): the notices of each turn, `{ early, late }` by
--- turn id, and the rest in the order they happened, each block's user lines left out when the
--- session stored that message after it was sent.
local function kept_lines(kept, messages)
  local notices, outside = {}, {}
  for i, block in ipairs(kept or {}) do
    if block.turn_id then
      notices[block.turn_id] = notices[block.turn_id] or { early = {}, late = {} }
      vim.list_extend(notices[block.turn_id][block.early and 'early' or 'late'], block.entries)
    else
      local entries = block.entries
      if block.user then
        local stored = false
        for _, message in ipairs(messages) do
          if message.role == 'user' and sortable_time(message.created_at) >= block.sent_at
              and message_text(message) == vim.trim(block.text or '') then
            stored = true
            break
          end
        end
        entries = stored and entries or vim.list_extend(vim.list_slice(block.user), entries)
      end
      table.insert(outside, { at = block.at or '', order = i, entries = entries })
    end
  end
  table.sort(outside, function(a, b)
    return a.at < b.at or (a.at == b.at and a.order < b.order)
  end)
  return notices, outside
end

--- A session's turns as in the chat: each message, the answer under its badge, the outcome.
--- Messages outside any turn are the user's own delegations (`/delegate`): the command, its
--- worker's line and the answer, as the chat showed them live. `kept`: what the chat showed
--- that the daemon does not store (`Chat:keep`), put back in its place: a turn's notices in
--- that turn, anything else between the stored messages that came before and after it.
function M.history(root, detail, kept)
  local names, tasks = tool_names(detail.messages or {})
  local out, turns = {}, turns_by_id(detail.turns)
  local workers = require('switchman.chat.workers').stored(root, detail)
  local by_user = require('switchman.chat.workers').stored_by_user(root, detail)
  local turn_workers = require('switchman.chat.workers').stored_by_turn(detail)
  local messages = detail.messages or {}
  local notices, outside = kept_lines(kept, messages)
  local applied = {} -- the Apply questions of each turn's code blocks, by turn id
  for _, apply in ipairs(present(detail.applies) and detail.applies or {}) do
    applied[apply.turn_id] = applied[apply.turn_id] or {}
    vim.list_extend(applied[apply.turn_id], M.approval_lines(apply.approval, 'apply_code'))
  end
  local open -- { turn, headed } of the turn being listed
  local function turn_notices(turn, which)
    return notices[turn.id] and notices[turn.id][which] or {}
  end
  local function heading()
    if open and not open.headed then
      open.headed = true
      table.insert(out, { '' })
      local t = open.turn
      vim.list_extend(out, M.answer(root, t.model, t.summary, t.decision and t.decision.banners, t.id))
      vim.list_extend(out, turn_notices(t, 'early'))
    end
  end
  local function close()
    heading()
    if open then
      vim.list_extend(out, turn_notices(open.turn, 'late'))
      vim.list_extend(out, applied[open.turn.id] or {})
      vim.list_extend(out, M.outcome(root, open.turn, open.turn.id, turn_workers[open.turn.id],
        M.rating_of(detail, open.turn.id)))
    end
    open = nil
  end
  local function kept_until(limit) -- the display-only blocks that happened before `limit`
    while outside[1] and (not limit or outside[1].at < limit) do
      if #out > 0 then
        table.insert(out, { '' })
      end
      vim.list_extend(out, table.remove(outside, 1).entries)
    end
  end
  for i, message in ipairs(messages) do
    local turn = turns[message.turn_id]
    if message.role == 'user' then
      close()
      kept_until(sortable_time(message.created_at))
      if #out > 0 then
        table.insert(out, { '' })
      end
      table.insert(out, USER_HEADING)
      open = turn and { turn = turn, headed = false } or nil
    elseif turn and (not open or open.turn ~= turn) then
      close()
      open = { turn = turn, headed = false }
    end
    local exchange = not present(message.turn_id)
    if exchange and message.role ~= 'user' then
      table.insert(out, { '' })
      vim.list_extend(out, M.answer(root, nil, '/delegate'))
    elseif message.role ~= 'user' then
      heading()
    end
    vim.list_extend(out, message_lines(message, names, workers, tasks))
    if exchange and message.role == 'user' then
      vim.list_extend(out, started_before(by_user, messages[i + 1]))
    end
  end
  close()
  vim.list_extend(out, M.delegation_lines(by_user)) -- still running, or the daemon stopped before it answered
  kept_until(nil)
  return out
end

--- A row's cost (`$x`, or `~$x` when all of it is Switchman's estimate: calls cut short before the
--- provider reported usage) and the note after the row (`  (~$y estimated)`, `  (estimated)` or '').
local function row_cost(row)
  local amount, note = cost.parts(row.cost_usd, row.estimated_usd)
  return amount, note ~= '' and (' ' .. note) or ''
end

local function cost_lines(root, breakdown)
  local out = {}
  if not present(breakdown) then
    return out
  end
  table.insert(out, { 'Cost by model:', hl = 'SwitchmanUser' })
  for _, row in ipairs(breakdown.by_model or {}) do
    local amount, note = row_cost(row)
    table.insert(out, { ('  %-20s %3d turn%s  %-11s %d in / %d out tokens%s'):format(models.short_name(root, row.model),
      row.turns or 0, row.turns == 1 and ' ' or 's', amount, row.input_tokens or 0, row.output_tokens or 0, note) })
  end
  if #(breakdown.by_model or {}) == 0 and #(breakdown.workers or {}) == 0 then
    table.insert(out, { '  nothing charged', hl = 'SwitchmanFooter' }) -- a failed call, say: not a missing figure
  end
  for _, worker in ipairs(breakdown.workers or {}) do
    local name = present(worker.title) and worker.title ~= '' and worker.title or worker.session_id
    local amount, note = row_cost(worker)
    table.insert(out, { ('  ↳ worker %s  %s  %s  (%s)%s'):format(name,
      models.short_name(root, present(worker.model) and worker.model or nil) or '-', amount, M.turns(worker.turns), note) })
  end
  return out
end

local ROLE_LABEL = { user = 'You', assistant = 'Switchman', tool = 'Tool results' }

--- A stored time (`2026-05-08T14:23:19.464000Z`) as the session picker shows it: `2026-05-08 14:23`.
function M.date(iso)
  return type(iso) == 'string' and (iso:sub(1, 16):gsub('T', ' ')) or ''
end

--- `1 turn`, `2 turns`.
function M.turns(count)
  count = tonumber(count) or 0
  return ('%d turn%s'):format(count, count == 1 and '' or 's')
end

--- A read-only transcript of a stored session: summary, cost by model, each turn.
function M.transcript(root, detail)
  local s = detail.session or {}
  local sticky = present(s.sticky_model) and ('  ·  sticky: ' .. models.short_name(root, s.sticky_model)) or ''
  local out = {
    { '# ' .. ((present(s.title) and s.title ~= '') and s.title or 'Untitled session') },
    { ('Session %s  ·  %s  ·  %s  ·  %s%s'):format(s.id or '?', M.date(s.created_at), M.turns(s.turn_count),
      cost.line(s.cost_usd, s.estimated_usd), sticky), hl = 'SwitchmanFooter' },
  }
  if s.is_worker then
    table.insert(out, { 'Worker of session ' .. tostring(s.parent_session_id), hl = 'SwitchmanFooter' })
  end
  if present(detail.handoff) then
    table.insert(out, { '' })
    vim.list_extend(out, require('switchman.handoff').lines(root, detail.handoff))
  end
  table.insert(out, { '' })
  vim.list_extend(out, cost_lines(root, detail.cost))
  local names, tasks = tool_names(detail.messages or {})
  local turns = turns_by_id(detail.turns)
  local workers = require('switchman.chat.workers').stored(root, detail)
  local by_user = require('switchman.chat.workers').stored_by_user(root, detail)
  local turn_workers = require('switchman.chat.workers').stored_by_turn(detail)
  local current
  local messages = detail.messages or {}
  for i, message in ipairs(messages) do
    local turn = turns[message.turn_id]
    local exchange = not present(message.turn_id)
    if exchange and message.role == 'user' then -- the user's own /delegate: no turn of its own
      current = nil
      table.insert(out, { '' })
      table.insert(out, { '## You delegated' })
    elseif turn and turn.id ~= current then
      current = turn.id
      table.insert(out, { '' })
      -- its cost includes its workers' (`incl. workers`), as its answer's footer and VS Code's badge do, and
      -- its part Switchman estimated is said, as on the session's line: not shown as the provider's bill
      table.insert(out, { M.rated(('## Turn %d · %s · %s · %s'):format(turn.index or 0, models.short_name(root, turn.model) or '-',
        cost.turn(turn.cost_usd, turn.estimated_usd, turn_workers[turn.id]), turn.status or '?'), M.rating_of(detail, turn.id)) })
      table.insert(out, { 'Why: ' .. (present(turn.summary) and turn.summary or '-'), hl = 'SwitchmanFooter' })
      if present(turn.error) then
        vim.list_extend(out, M.failure(turn.error.message))
      end
    end
    local label = exchange and message.role == 'assistant' and 'Worker' or ROLE_LABEL[message.role] or message.role
    table.insert(out, { '### ' .. label, hl = 'SwitchmanUser' })
    vim.list_extend(out, message_lines(message, names, workers, tasks))
    if exchange and message.role == 'user' then
      vim.list_extend(out, started_before(by_user, messages[i + 1]))
    end
  end
  vim.list_extend(out, M.delegation_lines(by_user))
  return out
end

return M

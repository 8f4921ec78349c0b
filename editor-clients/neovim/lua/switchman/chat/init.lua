--- The chat of a workspace: send messages with `switchman/chat`, stream the answer from
--- `switchman/chatDelta`, show the route badge from `switchman/routeDecided`.
local client = require('switchman.client')
local config = require('switchman.config')
local models = require('switchman.models')
local profiles = require('switchman.profiles')
local protocol = require('switchman.protocol')
local render = require('switchman.render')
local View = require('switchman.chat.view')
local workspace = require('switchman.workspace')

local M = {}

local chats = {} -- root -> Chat

local Chat = {}
Chat.__index = Chat

--- Display-only lines a chat keeps (the oldest go first), to draw them again.
local KEPT_LINES = 300

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

--- Now, in UTC, as the daemon writes times once made sortable (render.sortable_time).
function M.now()
  local ok, sec, usec = pcall(function()
    return (vim.uv or vim.loop).gettimeofday()
  end)
  if not ok or type(sec) ~= 'number' then
    sec, usec = os.time(), 0
  end
  return os.date('!%Y-%m-%dT%H:%M:%S', sec) .. ('.%06d'):format(usec or 0)
end

--- Remember lines this chat shows that the daemon does not store (a refused message and its error,
--- a command's answer, a turn's notices), so that drawing the session as stored (history that came
--- late, another window's change) puts them back where they were. `block` is `{ entries, at }` (the
--- time it happened, placed among the stored messages by their times) with `session_id`, or
--- `{ entries, turn_id, early }` for a turn's notice (under its heading when `early`, else at its end);
--- `text`, `user` and `sent_at`: the user's lines to show too unless the session stored that message.
function Chat:keep(block)
  self.kept = self.kept or {}
  table.insert(self.kept, block)
  if #self.kept > KEPT_LINES then
    table.remove(self.kept, 1)
  end
end

--- What this chat kept of `session_id` (and of no known session) to draw with it.
function Chat:kept_of(session_id)
  return vim.tbl_filter(function(block)
    return block.turn_id ~= nil or block.session_id == nil or block.session_id == session_id
  end, self.kept or {})
end

--- True (and the user told) while a turn of this chat is waiting for its answer.
function Chat:still_running()
  if self.turn then
    vim.notify('Switchman: a turn is still running; wait for it or cancel it (:Switchman cancel).', vim.log.levels.WARN)
  end
  return self.turn ~= nil
end

--- Send a message (or slash command) to the workspace's current session.
function Chat:send(text)
  text = vim.trim(text or '')
  if text == '' then
    return false
  end
  if self:still_running() then
    return false
  end
  self.view:gap()
  local shown = render.user(text)
  local attachments = self.attachments or {}
  self.attachments = nil
  for _, attachment in ipairs(attachments) do
    table.insert(shown, render.attachment(attachment))
  end
  self.view:append(shown)
  if not models.cached(self.root) then
    models.fetch(self.root) -- answered before the turn's badge arrives: it shows the alias
  end
  local turn = { streamed = '', answered = false, text = text, shown = shown, sent_at = M.now(),
    attachments = attachments }
  self.turn = turn
  local params = { workspace = workspace.uri(self.root), message = text }
  if #attachments > 0 then
    params.attachments = attachments
  end
  -- on_done may run at once (the daemon cannot start): then `turn` is already finished.
  turn.request_id = client.request(self.root, protocol.request.chat, params, function(err, result)
    self:finish(turn, err, result)
  end)
  return true
end

--- Put a message that got no answer back in the input area, to be fixed or sent again, with what
--- was attached to it attached again (unless something new was typed or attached meanwhile, or
--- `refused_attachment`: an attachment was what the daemon refused, and attached again it would
--- refuse every message after this one).
function Chat:give_back(turn, refused_attachment)
  if vim.trim(self.view:draft()) ~= '' then
    return
  end
  self.view:give_back(turn.text)
  if refused_attachment and turn.attachments and #turn.attachments > 0 then
    vim.notify('Switchman: what was attached was taken off the message: attach again what should go with it.',
      vim.log.levels.WARN)
  elseif turn.attachments and #turn.attachments > 0 and not self.attachments then
    self.attachments = vim.list_slice(turn.attachments)
    local names = vim.tbl_map(function(attachment)
      return (render.attachment(attachment):gsub('^%s*', ''))
    end, turn.attachments)
    vim.notify('Switchman: attached again: ' .. table.concat(names, ', '), vim.log.levels.INFO)
  end
end

--- Attach a file or a selection to the next message (`:Switchman send` / `:Switchman add`).
function Chat:attach(attachment)
  self.attachments = self.attachments or {}
  local label = render.attachment(attachment):gsub('^%s*', '')
  for i, earlier in ipairs(self.attachments) do
    -- the same file (or the same lines of it) again: once, with the text it has now
    if earlier.uri == attachment.uri and earlier.kind == attachment.kind and earlier.start_line == attachment.start_line
      and earlier.end_line == attachment.end_line then
      self.attachments[i] = attachment
      return vim.notify(('Switchman: %s was already attached: it goes once, as it is now.'):format(label),
        vim.log.levels.INFO)
    end
  end
  table.insert(self.attachments, attachment)
  vim.notify('Switchman: attached ' .. label, vim.log.levels.INFO)
end

--- Send what is in the input area.
function Chat:submit()
  if self:still_running() then
    return false
  end
  local text = self.view:take_input()
  self.view:show_preview(nil)
  return self:send(text)
end

function Chat:answer_heading(turn, model, summary, banners)
  self.view:gap()
  self.view:append(render.answer(self.root, model, summary, banners, turn.turn_id))
  turn.answered = true
end

--- `switchman/routeDecided`: the first one after sending names our turn.
function Chat:route_decided(params)
  if not self.turn or self.turn.turn_id then
    return
  end
  self.turn.turn_id = params.turn_id
  self.shown_turns = self.shown_turns or {}
  self.shown_turns[params.turn_id] = true
  self:answer_heading(self.turn, params.model, params.summary, params.banners)
  self:merge_history()
end

--- `switchman/chatDelta` of our turn.
function Chat:delta(params)
  if not self.turn or not self.turn.turn_id or params.turn_id ~= self.turn.turn_id then
    return
  end
  if params.kind == protocol.delta.text then
    self.turn.streamed = self.turn.streamed .. (params.text or '')
    self.view:stream(params.text or '')
  elseif params.kind == protocol.delta.tool_call then
    self.turn.acted = true
    self.view:append({ render.tool_call(params.tool or {}) })
    -- the order of the calls, for their worker lines (a queued call's may come first)
    self.call_order = self.call_order or { count = 0, by_id = {} }
    self.call_order.count = self.call_order.count + 1
    if type(params.tool) == 'table' and type(params.tool.id) == 'string' then
      self.call_order.by_id[params.tool.id] = self.call_order.count
      local input = type(params.tool.input) == 'table' and params.tool.input or {}
      self.call_order.tasks = self.call_order.tasks or {} -- a delegation's, for its start question's line
      self.call_order.tasks[params.tool.id] = type(input.task) == 'string' and input.task or nil
    end
  elseif params.kind == protocol.delta.tool_result then
    local tool = type(params.tool) == 'table' and params.tool or {}
    local lines = { render.tool_result(tool) }
    if tool.name == 'delegate' then -- its question, and those it superseded (asked again), as rebuilt:
      local tasks = self.call_order and self.call_order.tasks or {}
      local asked = render.start_questions(tool, tasks[tool.id]) -- above its worker's line, asked before it started
      if #asked > 0 and not require('switchman.chat.workers').start_answered(self, tool.id, asked) then
        vim.list_extend(lines, asked)
      end
    elseif type(tool.approval) == 'table' then -- the question it asked, as a rebuilt chat shows it
      vim.list_extend(lines, render.approval_lines(tool.approval, tool.name))
    end
    vim.list_extend(lines, render.tool_output(tool.output)) -- what a command printed
    self.view:append(lines)
  elseif params.kind == protocol.delta.notice then
    local lines = render.notice(params.text or '')
    self.view:append(lines)
    -- not stored: kept to be drawn again (a retry's before the answer, a step limit's after it)
    self:keep({ turn_id = self.turn.turn_id, early = self.turn.streamed == '' and not self.turn.acted,
      entries = lines })
  end
end

--- The answer to `switchman/chat`: the outcome of the turn, a command's output, or an error.
function Chat:finish(turn, err, result)
  if self.turn ~= turn then
    return -- given up on (the daemon stopped)
  end
  self.turn = nil
  self:show_outcome(turn, err, result)
  self:merge_history()
  if self.reload_after_turn then
    local session_id = self.reload_session_id or self.session_id
    self.reload_after_turn, self.reload_session_id = nil, nil
    self:reload(session_id)
  end
end

--- Whether the daemon keeps a command's exchange in the session: only a `/delegate` that ran a
--- worker (or failed once sent) does; `/model`, `/cost`, a refused command are this chat's alone.
function M.command_stored(result)
  local err = present(result.error) and result.error or {}
  return result.summary == '/delegate'
    and (present(result.model) or (result.status == 'failed' and not protocol.not_sent[err.code]))
end

--- The question an Apply of a code block of turn `turn_id` asked, and its answer: shown at the end
--- of that turn's answer (above its outcome: the footer, a failure's line), where a chat drawn from the session shows it.
function Chat:applied(turn_id, approval)
  local row = turn_id and self.view:valid() and require('switchman.ui').turn_end(self.view.transcript, turn_id)
  if row then
    self.view:insert(row, render.approval_lines(approval, 'apply_code'))
  end
end

function Chat:show_outcome(turn, err, result)
  turn.shown = turn.shown or render.user(turn.text or '')
  turn.sent_at = turn.sent_at or M.now()
  if err then
    local lines = render.rpc_error(err)
    self.view:append(lines)
    local data = type(err) == 'table' and type(err.data) == 'table' and err.data or {}
    if protocol.not_sent[data.code] then
      -- nothing was sent: fix it and send again
      self:give_back(turn, data.code == protocol.error.invalid_attachment)
      self:keep({ session_id = self.session_id, at = turn.sent_at, entries = vim.list_extend(vim.list_slice(turn.shown), lines) })
    elseif not turn.turn_id then
      self.unidentified = true -- what it stored (if anything) cannot be told apart
      self:keep({ session_id = self.session_id, at = M.now(), entries = lines, text = turn.text, user = turn.shown,
        sent_at = turn.sent_at })
    end
    return
  end
  self.session_id = result.session_id
  if result.kind == 'command' then
    self.unidentified = true -- a command's stored messages (a /delegate's) have no turn id
    self.last_turn_id, self.unanswered = nil, nil -- the last answer is a command's (or a worker's): g+ must not rate the one before
    self:answer_heading(turn, nil, result.summary)
    -- a refused command (/modle, /delegate ultra, a usage error) is a failure like any other: ✗
    local lines = result.status == 'failed' and render.failure(result.text) or render.lines(result.text or '')
    self.view:append(lines)
    if result.status == 'failed' then
      self:give_back(turn) -- /modle, /delegate ultra: nothing was done
    end
    if not M.command_stored(result) then
      local entries = vim.list_extend(vim.list_slice(turn.shown), { { '' } })
      vim.list_extend(entries, render.answer(self.root, nil, result.summary))
      self:keep({ session_id = result.session_id, at = turn.sent_at, entries = vim.list_extend(entries, lines) })
    end
    return
  end
  if not turn.answered then
    self:answer_heading(turn, result.model, result.summary, result.banners)
  end
  local text = result.text ~= vim.NIL and result.text or ''
  if #text > #turn.streamed and text:sub(1, #turn.streamed) == turn.streamed then
    self.view:stream(text:sub(#turn.streamed + 1))
  end
  self.last_turn_id = result.turn_id
  -- one that failed (or was stopped) before any text, tool call or worker has nothing to rate: a 👍
  -- there taught the pattern store that the model did well on a turn it never answered
  self.unanswered = result.status ~= 'completed' and vim.trim(text) == '' and not turn.acted
  if self.unanswered then
    self.last_turn_id = nil
  end
  self.shown_turns = self.shown_turns or {}
  self.shown_turns[result.turn_id] = true
  -- its cost includes its workers' (`incl. workers`), as VS Code's badge and the session's totals do
  local workers = require('switchman.chat.workers').of_turn(self, result.turn_id)
  self.view:append(render.outcome(self.root, result, result.turn_id, workers))
  if result.status == 'failed' or render.interrupted(result) then
    self:give_back(turn) -- "Your message is saved; send it again to retry": it is ready to send
  end
end

--- Cancel the running turn (`switchman/cancel`, or `$/cancelRequest` before it has an id).
function Chat:cancel()
  local turn = self.turn
  if not turn and self.running_elsewhere then
    -- another window's turn, shown here: its daemon alone stops it, and this one says so (or, its
    -- daemon having died, marks it ended and the chat is drawn again)
    client.request(self.root, protocol.request.cancel, { turn_id = self.running_elsewhere }, function(err)
      if err then
        return client.notify_error(err, vim.log.levels.INFO)
      end
      vim.notify('Switchman: no turn is running.', vim.log.levels.INFO)
    end)
    return false
  end
  if not turn then
    vim.notify('Switchman: no turn is running.', vim.log.levels.INFO)
    return false
  end
  if not turn.turn_id then
    client.cancel_request(self.root, turn.request_id)
    return true
  end
  client.request(self.root, protocol.request.cancel, { turn_id = turn.turn_id }, function(err)
    if err then
      client.notify_error(err, vim.log.levels.WARN)
    end
  end)
  return true
end

--- How long a turn running when this Neovim stopped its daemon (`:Switchman restart`) waits for
--- its answer: the daemon answers the turns it ends (`interrupted`) before it exits, but the
--- editor may see the exit first.
M.answer_wait_ms = 1000

--- The daemon went away: a running turn will never be answered, nor its workers end. `info`: the
--- client's `exit` event. After a restart asked for here, the turn's own answer (read after the
--- exit) is shown if it comes within `answer_wait_ms`.
function Chat:daemon_stopped(info)
  require('switchman.chat.workers').daemon_stopped(self, info)
  local turn = self.turn
  if turn and type(info) == 'table' and info.expected then
    vim.defer_fn(function()
      self:turn_lost(turn)
    end, M.answer_wait_ms)
  elseif turn then
    self:turn_lost(turn)
  end
end

--- The running `turn` will not be answered (its daemon stopped): its message goes back to the input.
function Chat:turn_lost(turn)
  if self.turn ~= turn then
    return -- answered meanwhile
  end
  self.turn = nil
  self:give_back(turn)
  local lines = render.failure('The Switchman daemon stopped during this turn; sending again starts it.')
  self.view:append(lines)
  self:keep({ session_id = self.session_id, at = M.now(), entries = lines })
end

--- Start a new session in the workspace; `on_done(session)` after it is the current one.
function M.start_session(root, on_done)
  client.request(root, protocol.request.new_session, { workspace = workspace.uri(root) }, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.ERROR)
    end
    on_done(result.session)
  end)
end

--- Start a new session and clear the chat.
function Chat:new_session()
  if self:still_running() then
    return
  end
  M.start_session(self.root, function(session)
    self.session_id = session.id
    self.last_turn_id, self.unanswered = nil, nil -- the old session's answers are no longer shown
    self.running_elsewhere = nil
    self.workers = nil -- their lines are gone with the transcript
    self.view:clear()
    local lines = { { 'New session ' .. session.id, hl = 'SwitchmanFooter' } }
    self.view:append(lines)
    self:keep({ session_id = session.id, at = M.now(), entries = lines })
  end)
end

--- Show the workspace's current session in a new chat. When the user sent a message before
--- it arrived (`:Switchman chat {message}`, or typing at once), the history goes above it.
function Chat:load_history()
  local uri = workspace.uri(self.root)
  client.request(self.root, protocol.request.sessions, { workspace = uri }, function(err, result)
    local current = not err and result and result.current_session_id
    if not current or current == vim.NIL then
      return
    end
    client.request(self.root, protocol.request.session, { session_id = current }, function(e, detail)
      if e or not detail or not self.view:valid() then
        return
      end
      if self.view.empty then
        return self:show_session(current, detail)
      end
      if self.session_id and self.session_id ~= current then
        return -- the message went to another session (/new): that one is shown
      end
      self.session_id = current
      self.early_history = detail
      self:merge_history()
    end)
  end)
end

--- Put the history that arrived after a message was sent above what this chat shows, leaving
--- out the stored messages of what was sent meanwhile (known by their turn ids). Deferred while
--- the running turn's id is not known yet (until `switchman/routeDecided` or its end); when
--- something sent has stored messages without a turn id (a command's, a `/delegate`'s), the
--- whole session is drawn as stored instead (after the running turn). No message shows twice.
function Chat:merge_history()
  local detail = self.early_history
  if not detail or (self.turn and not self.turn.turn_id) then
    return
  end
  self.early_history = nil
  if not self.view:valid() then
    return
  elseif self.unidentified then
    return self:reload(self.session_id)
  end
  local shown = self.shown_turns or {}
  local earlier = vim.tbl_filter(function(message)
    return message.turn_id == nil or message.turn_id == vim.NIL or not shown[message.turn_id]
  end, detail.messages or {})
  self.view:prepend(render.history(self.root, vim.tbl_extend('force', self:with_ratings(detail), { messages = earlier })))
  self.reload_after_turn = self.reload_after_turn or self.turn ~= nil
end

--- The daemon took `rating` ('up', 'down', 'none') of turn `turn_id`: its footer says so at once (this
--- daemon does not announce its own change back as another window's).
function Chat:rated(turn_id, rating)
  self.ratings = self.ratings or {}
  self.ratings[turn_id] = render.RATING[rating] and rating or nil
  if self.view:valid() then
    self.view:show_rating(turn_id, rating)
  end
end

--- `detail` with the ratings to draw: the session's as the daemon has them now (another window's
--- included), or, from a daemon that sends none, the ones given in this chat.
function Chat:with_ratings(detail)
  if type(detail.ratings) == 'table' then
    return detail
  end
  return vim.tbl_extend('force', detail, { ratings = self.ratings or {} })
end

--- Draw a session's stored transcript in place of what the chat shows.
function Chat:show_session(session_id, detail)
  self.session_id = session_id
  self.early_history, self.unidentified = nil, nil -- all of it is drawn as stored
  local last, running = M.last_answered_turn(detail)
  -- another window's answer still streaming has nothing to rate yet: g+ says so (the daemon
  -- refused it as an unknown turn); that window's end of it redraws this chat again
  self.last_turn_id, self.unanswered = last, running and 'running' or nil
  self.running_elsewhere = nil -- no turn of this chat runs while it is drawn from the session
  for _, turn in ipairs(detail.turns or {}) do
    if turn.status == 'running' then
      self.running_elsewhere = turn.id
    end
  end
  -- self.workers stays: no turn of this chat runs (its delegations sent their last update), and
  -- `:Switchman workers` still lists them
  self.view:clear()
  -- with what this chat showed that is not stored, each in its place
  self.view:append(render.history(self.root, self:with_ratings(detail), self:kept_of(session_id)))
end

--- Fetch the chat's session (or `session_id`) and draw it as the daemon stored it: what another
--- editor window sent to the shared session shows too. Waits for this chat's running turn.
function Chat:reload(session_id)
  session_id = session_id or self.session_id
  if self.turn then
    self.reload_after_turn = true
    self.reload_session_id = session_id
    return
  end
  if not session_id or session_id == vim.NIL then
    return
  end
  self.reload_seq = (self.reload_seq or 0) + 1
  local seq = self.reload_seq
  client.request(self.root, protocol.request.session, { session_id = session_id }, function(err, detail)
    if err or not detail or seq ~= self.reload_seq or not self.view:valid() then
      return
    end
    if self.turn then -- sent meanwhile: draw it all once that turn has ended
      self.reload_after_turn, self.reload_session_id = true, session_id
      return
    end
    self:show_session(session_id, detail)
  end)
end

--- `switchman/sessionChanged`: another editor window's daemon changed the workspace's current
--- session (a message, its answer, the sticky model or profile, or a new current session).
function Chat:session_changed(params)
  local session_id = params.session_id
  if session_id == nil or session_id == vim.NIL then
    return
  end
  self:reload(session_id)
end

--- The turn whose answer ends a session's transcript (what g+ / g- rate after a reload), or
--- nil when it ends with a command's or a worker's reply, or has no answer; nil and true when
--- that answer's turn still runs (another window's, drawn before it ended).
function M.last_answered_turn(detail)
  local messages = detail.messages or {}
  local last = messages[#messages]
  if not last or last.role == 'user' or last.turn_id == nil or last.turn_id == vim.NIL then
    return nil
  end
  for _, turn in ipairs(detail.turns or {}) do
    if turn.id == last.turn_id and turn.status == 'running' then
      return nil, true
    end
  end
  return last.turn_id
end

--- Ask where the draft would route and show it beside the input (debounced).
function Chat:preview_later()
  self.preview_seq = (self.preview_seq or 0) + 1
  local seq = self.preview_seq
  vim.defer_fn(function()
    if seq ~= self.preview_seq or not self.view:valid() then
      return
    end
    local draft = vim.trim(self.view:draft())
    if draft == '' or not client.get(self.root) then
      return self.view:show_preview(nil)
    end
    local params = { workspace = workspace.uri(self.root), message = draft, has_images = false }
    client.request(self.root, protocol.request.preview, params, function(err, result)
      if seq == self.preview_seq and self.view:valid() then
        self.view:show_preview(M.preview_text(self.root, err, result))
      end
    end)
  end, 300)
end

--- The text shown for a preview answer.
function M.preview_text(root, err, result)
  if err then
    return client.error_message(err)
  elseif result.command and result.command ~= vim.NIL then
    return 'command ' .. result.command
  elseif result.error and result.error ~= vim.NIL then
    return result.error.message
  end
  return render.badge(root, result.model, result.summary)
end

local function buffer_lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

local ACTIONS = {
  send = { input = true, fn = function(chat)
    chat:submit()
  end },
  cancel = { fn = function(chat)
    chat:cancel()
  end },
  close = { fn = function(chat)
    chat.view:hide()
  end },
  why = { fn = function(chat)
    require('switchman.explain').why(chat.root)
  end },
  model = { fn = function(chat)
    models.pick(chat.root)
  end },
  new_session = { fn = function(chat)
    chat:new_session()
  end },
  thumbs_up = { fn = function(chat)
    M.feedback(chat.root, 'up')
  end },
  thumbs_down = { fn = function(chat)
    M.feedback(chat.root, 'down')
  end },
  focus_input = { transcript = true, fn = function(chat)
    chat.view:show()
  end },
  yank_block = { transcript = true, fn = function(chat)
    local row = vim.api.nvim_win_get_cursor(0)[1]
    local block = render.code_block_at(buffer_lines(chat.view.transcript), row)
    if not block then
      return vim.notify('Switchman: the cursor is not in a code block.', vim.log.levels.INFO)
    end
    vim.fn.setreg(vim.v.register, block.text, 'l')
    vim.notify(render.yanked(block), vim.log.levels.INFO)
  end },
  apply_block = { transcript = true, fn = function(chat)
    local row = vim.api.nvim_win_get_cursor(0)[1]
    local block = render.code_block_at(buffer_lines(chat.view.transcript), row)
    if not block then
      return vim.notify('Switchman: the cursor is not in a code block.', vim.log.levels.INFO)
    end
    local turn_id = require('switchman.ui').turn_at(chat.view.transcript, row)
    require('switchman.apply').apply(chat.root, block.text,
      { [chat.view.transcript] = true, [chat.view.input] = true }, turn_id, function(approval)
        chat:applied(turn_id, approval)
      end)
  end },
}

local function map_action(chat, bufnr, name, modes)
  local action = ACTIONS[name]
  for mode, lhs in pairs(modes) do
    for _, key in ipairs(type(lhs) == 'table' and lhs or { lhs }) do
      vim.keymap.set(mode, key, function()
        action.fn(chat)
      end, { buffer = bufnr, nowait = true, silent = true, desc = 'Switchman chat: ' .. name:gsub('_', ' ') })
    end
  end
end

local function set_keymaps(chat)
  for name, modes in pairs(config.options.chat.keymaps or {}) do
    local action = ACTIONS[name]
    if action and modes then
      if not action.transcript then
        map_action(chat, chat.view.input, name, modes)
      end
      if not action.input then
        map_action(chat, chat.view.transcript, name, modes)
      end
    end
  end
end

local function completion_items(root, prefix)
  local items = {}
  local function add(word, menu)
    if vim.startswith(word, prefix) then
      table.insert(items, { word = word, menu = menu })
    end
  end
  local known = (models.cached(root) or {}).models or {}
  if prefix:match('^@') then
    for _, model in ipairs(known) do
      for _, alias in ipairs(model.aliases or {}) do
        add('@' .. alias, model.id)
      end
    end
    return items
  end
  for _, command in ipairs(protocol.slash_commands) do
    add(command)
  end
  for _, model in ipairs(known) do
    add('/model ' .. ((model.aliases or {})[1] or model.id), model.id)
  end
  for _, name in ipairs(profiles.cached(root) or {}) do -- asked for as the daemon started
    add('/profile ' .. name, 'profile')
  end
  return items
end

--- 'completefunc' of the chat input: `@alias` and slash commands at the start of a message.
function M.complete(findstart, base)
  local before = vim.api.nvim_get_current_line():sub(1, vim.api.nvim_win_get_cursor(0)[2])
  if findstart == 1 then
    local start = before:match('^%s*()/') or before:match('^%s*()@%S*$')
    return start and start - 1 or -3
  end
  return completion_items(vim.b.switchman_root, base)
end

local function new_chat(root)
  local chat = setmetatable({ root = root, view = View.new(root) }, Chat)
  vim.bo[chat.view.input].completefunc = "v:lua.require'switchman.chat'.complete"
  set_keymaps(chat)
  if config.options.chat.preview then
    vim.api.nvim_buf_attach(chat.view.input, false, {
      on_lines = function()
        chat:preview_later()
      end,
    })
  end
  return chat
end

--- The chat of a workspace root (created when `create` is true).
function M.get(root, create)
  local chat = chats[root]
  if chat and not chat.view:valid() then
    chat, chats[root] = nil, nil
  end
  if not chat and create then
    chat = new_chat(root)
    chats[root] = chat
    chat.fresh = true
  end
  return chat
end

--- `:Switchman new`: a new session, shown in the chat if one is open.
function M.new_session(root)
  local chat = M.get(root)
  if chat then
    return chat:new_session()
  end
  M.start_session(root, function(session)
    vim.notify('Switchman: new session ' .. session.id, vim.log.levels.INFO)
  end)
end

--- Continue an older session of the workspace (`switchman/resumeSession`): it becomes the
--- current session, and the chat is opened (or focused) showing its conversation; the next
--- message continues it. Refused while this chat's turn runs.
function M.resume(root, session_id)
  local chat = M.get(root)
  if chat and chat:still_running() then
    return
  end
  local _, problem = client.ensure(root)
  if problem then
    return vim.notify(problem, vim.log.levels.ERROR)
  end
  local params = { workspace = workspace.uri(root), session_id = session_id }
  client.request(root, protocol.request.resume_session, params, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.ERROR)
    end
    chat = M.get(root, true)
    local drawn = not chat.fresh -- a fresh chat loads the current session (this one) as it opens
    M.open(root)
    if drawn then
      chat.workers = nil -- the session left's delegations are not this one's
      chat:reload(result.session.id)
    end
  end)
end

local RATED = { up = 'noted 👍 for the last answer', down = 'noted 👎 for the last answer',
  none = 'took back the rating of the last answer' }

--- Rate the last answer of the workspace's chat (`switchman/feedback`): 'up', 'down', or 'none' (the
--- rating given before taken back: a g+ pressed by mistake).
function M.feedback(root, rating)
  if not RATED[rating] then
    return vim.notify('Switchman: feedback is "up", "down" or "none" (takes back the rating).', vim.log.levels.ERROR)
  end
  local chat = chats[root]
  if chat and not chat.last_turn_id and chat.unanswered == 'running' then
    return vim.notify('Switchman: the last answer is still being written in another window (or editor): rate it '
      .. 'once it has ended.', vim.log.levels.INFO)
  end
  if chat and not chat.last_turn_id and chat.unanswered then
    return vim.notify('Switchman: the last turn ended before answering anything: there is nothing to rate.',
      vim.log.levels.INFO)
  end
  if not chat or not chat.last_turn_id then
    return vim.notify('Switchman: no answer to rate yet in this chat.', vim.log.levels.INFO)
  end
  local turn_id = chat.last_turn_id
  client.request(root, protocol.request.feedback, { turn_id = turn_id, rating = rating },
    function(err)
      if err then
        return client.notify_error(err, vim.log.levels.WARN)
      end
      chat:rated(turn_id, rating)
      if present(chat.session_id) then -- its transcript, if open, ends the turn's heading with it
        require('switchman.sessions').refresh(root, chat.session_id)
      end
      vim.notify(('Switchman: %s.'):format(RATED[rating]), vim.log.levels.INFO)
    end)
end

--- Open (or focus) the chat of a workspace root; a message given is sent at once.
function M.open(root, message)
  local _, problem = client.ensure(root)
  if problem then
    return vim.notify(problem, vim.log.levels.ERROR)
  end
  local chat = M.get(root, true)
  chat.view:show()
  if chat.fresh then
    chat.fresh = false
    models.fetch(root)
    profiles.prefetch(root) -- `:Switchman profile <Tab>` completes from them at once
    if config.options.chat.load_history then
      chat:load_history()
    end
  end
  if message and vim.trim(message) ~= '' then
    chat:send(message)
  elseif config.options.chat.start_insert then
    vim.cmd('startinsert')
  end
  return chat
end

client.on(protocol.notification.route_decided, function(root, params)
  local chat = chats[root]
  if chat then
    chat:route_decided(params)
  end
end)

client.on(protocol.notification.session_changed, function(root, params)
  if present(params.session_id) then -- its transcript, if open (a rating changed there, a message sent)
    require('switchman.sessions').refresh(root, params.session_id)
  end
  local chat = chats[root]
  if chat and chat.view:valid() then
    chat:session_changed(params)
  end
end)

client.on(protocol.notification.chat_delta, function(root, params)
  local chat = chats[root]
  if chat then
    chat:delta(params)
  end
end)

-- Delegation lines and `:Switchman workers` (listens to `switchman/delegation`).
require('switchman.chat.workers')

client.on('exit', function(root, info)
  local chat = chats[root]
  if chat then
    chat:daemon_stopped(info)
  end
end)

return M

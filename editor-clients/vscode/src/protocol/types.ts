/** The records of docs/protocol.md, as TypeScript types. Field names follow the wire (snake_case). */

export type WorkspaceUri = string;
export type Money = string;

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

export interface PolicyEvaluation {
  policy: string;
  verdict: 'not_applicable' | 'deferred' | 'rejected' | 'chose';
  candidate_model: string | null;
  reason: string;
  rule_name: string | null;
  validation_failure: string | null;
  outage_scope: string | null;
  /** Slot 4's other candidates: each model's score and how many past turns back it. */
  pattern_alternatives?: { model: string; score: number; sample_size: number }[] | null;
}

export interface RouteDecision {
  type: 'route.decided';
  timestamp: string;
  session_id: string;
  turn_id: string;
  chain: PolicyEvaluation[];
  winner_index: number | null;
  chosen_model: string | null;
  banners: string[];
}

export interface PendingSwap {
  model: string | null;
}

export interface Session {
  id: string;
  workspace: WorkspaceUri;
  title: string;
  created_at: string;
  updated_at: string;
  sticky_model: string | null;
  pending_swap: PendingSwap | null;
  last_model: string | null;
  turn_count: number;
  cost_usd: Money;
  /** The part of `cost_usd` that is Switchman's estimate (calls cut short before the provider reported usage). */
  estimated_usd?: Money;
  is_worker: boolean;
  parent_session_id: string | null;
  parent_tool_use_id: string | null;
  workers?: Session[];
  /** A worker listed under its planner: how its delegation went (absent from older daemons). */
  delegation_status?: DelegationStatus | null;
}

export type TurnStatus = 'running' | 'completed' | 'cancelled' | 'failed' | 'interrupted';

export interface ErrorInfo {
  code: string;
  message: string;
}

export interface Turn {
  id: string;
  session_id: string;
  index: number;
  status: TurnStatus;
  model: string | null;
  started_at: string;
  ended_at: string | null;
  usage: Usage | null;
  cost_usd: Money;
  /** The part of `cost_usd` that is Switchman's estimate (calls cut short before the provider reported usage). */
  estimated_usd?: Money;
  llm_calls: number;
  tool_calls: number;
  error: ErrorInfo | null;
  summary: string | null;
  decision: RouteDecision | null;
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; media_type: string }
  /** A file or selection attached to a user's message (`path` relative to the workspace when inside it). */
  | { type: 'attachment'; kind: 'file' | 'selection'; path: string; text: string; start_line?: number | null;
    end_line?: number | null; truncated?: boolean }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error: boolean; approval?: ApprovalRecord | null;
      /** The line the chat showed for the result live; null in results stored before it was kept. */
      summary?: string | null;
      /** The chat shows `content` under the call (a command that ran: its exit status and what it printed). */
      output_shown?: boolean;
      /** A delegation's questions asked before `approval` and superseded by it, oldest first (absent: asked once). */
      superseded_approvals?: ApprovalRecord[] };

/**
 * The question the user was asked before a tool call ran and their answer, as the session keeps it with the call's
 * result (absent when nobody was asked, and from older daemons). `id` is the `switchman/approve` request's.
 */
export interface ApprovalRecord {
  id: string;
  title: string;
  outcome: 'allowed_once' | 'allowed_always' | 'denied' | 'not_applied' | 'unanswered' | 'stopped';
  reason: string | null;
  command: string | null;
  cwd: string | null;
  path: string | null;
  /** A file change's diff as its question showed it (capped by the daemon); absent or null in older records. */
  diff?: string | null;
  /** A delegation's: the tier its worker was to run on; absent or null in older records. */
  tier?: string | null;
  /** A delegation's: the tier the planner asked for, when the tier floor lowered it to `tier`; else null or absent. */
  requested_tier?: string | null;
  /** A delegation's: the model the question said its worker would run on; absent or null in older records. */
  model?: string | null;
  /** A delegation's: what chose `model` when its tier did not (`rule: docs`); else null or absent. */
  routed_by?: string | null;
  /** A delegation's: the write and execute tools its worker was to have; absent or null in older records. */
  worker_tools?: string[] | null;
  /**
   * A delegation's question answered and then asked again, its worker's model having changed while it waited: why
   * (`the model changed from … to … while the question waited`); null or absent for the question whose answer counted.
   */
  superseded?: string | null;
  /**
   * A delegation's question whose answer counted although its worker's model changed while it waited, nothing being
   * asked again (an "always" answer): why (`the model changed from … to … while the question waited`); the worker ran
   * on the second. Null or absent otherwise.
   */
  model_changed?: string | null;
}

export interface Message {
  id: string;
  session_id: string;
  turn_id: string | null;
  role: 'user' | 'assistant' | 'tool';
  created_at: string;
  model: string | null;
  content: ContentBlock[];
}

export interface ChatResult {
  kind: 'turn' | 'command';
  session_id: string;
  turn_id: string | null;
  status: TurnStatus;
  model: string | null;
  text: string;
  usage: Usage | null;
  cost_usd: Money;
  /** The part of `cost_usd` that is Switchman's estimate (calls cut short before the provider reported usage). */
  estimated_usd?: Money;
  error: ErrorInfo | null;
  summary: string | null;
  banners: string[];
}

export interface CancelResult {
  cancelled: boolean;
  /** A delegation's stop (with `tool_use_id`) also answers `ended` (not waiting or running) or `starting` (being routed). */
  status: TurnStatus | 'ended' | 'starting';
}

export interface SetModelResult {
  outcome: 'applied' | 'cleared' | 'queued' | 'unchanged';
  session_id: string;
  sticky_model: string | null;
  pending_swap: PendingSwap | null;
  message: string;
}

export interface ModelInfo {
  id: string;
  display_name: string;
  provider: string;
  aliases: string[];
  tier: string | null;
  can_delegate: boolean;
  configured: boolean;
  availability: 'healthy' | 'degraded' | 'unavailable';
  pricing?: { input: Money; output: Money; cache_read: Money; cache_write: Money } | null;
}

export interface ModelsResult {
  sticky_model: string | null;
  models: ModelInfo[];
}

export interface ExplainResult {
  turn_id: string | null;
  decision: RouteDecision | null;
  summary: string | null;
  text: string | null;
}

export interface PreviewResult {
  model: string | null;
  summary: string | null;
  message: string;
  decision: RouteDecision | null;
  text: string | null;
  error: ErrorInfo | null;
  command: string | null;
}

export interface SessionsResult {
  current_session_id: string | null;
  sessions: Session[];
}

export interface WorkerCost {
  session_id: string;
  parent_tool_use_id: string | null;
  model: string | null;
  cost_usd: Money;
  turns: number;
  /** The part of `cost_usd` that is Switchman's estimate (calls cut short before the provider reported usage). */
  estimated_usd?: Money;
  /** The worker's task (the first line of what it was handed). */
  title?: string;
  /** How its delegation went, as `delegations` has it (null when the session has no record of it). */
  status?: DelegationStatus | null;
  /** The delegation's error when it failed or was stopped (`worker_error: …`, `timeout`). */
  error?: string | null;
}

export interface SessionCost {
  total_usd: Money;
  by_model: { model: string; cost_usd: Money; turns: number; input_tokens: number; output_tokens: number }[];
  planner_usd: Money;
  workers_usd: Money;
  workers: WorkerCost[];
  /** The part of `total_usd` that is Switchman's estimate, workers included. */
  estimated_usd?: Money;
}

export interface SessionDetail {
  session: Session;
  messages: Message[];
  turns: Turn[];
  cost: SessionCost;
  /** For a worker session: the typed handoff it started from (docs/protocol.md, "Handoff envelope"). */
  handoff?: HandoffEnvelope | null;
  /** The session's delegations from its history, oldest first (absent from older daemons). */
  delegations?: DelegationRecord[];
  /** The user's 👍 / 👎 by turn id (absent from older daemons). */
  ratings?: Record<string, 'up' | 'down'>;
  /** The questions the Apply of a turn's code block asked, and their answers (absent from older daemons). */
  applies?: { turn_id: string; approval: ApprovalRecord }[];
}

/** A delegation as the session's history keeps it: enough to rebuild its card after a reload. */
export interface DelegationRecord {
  tool_use_id: string;
  worker_session_id: string;
  source: 'planner' | 'user';
  started_at: string;
  task: string;
  /** The tier asked for. */
  tier: string;
  /** The tier the worker ran on, after the tier floor. */
  worker_tier: string | null;
  tier_floor: string | null;
  floor_applied: boolean;
  model: string | null;
  /** What chose the model when the tier did not (`rule: docs questions`); absent from older daemons. */
  routed_by?: string | null;
  /** `running` also when the daemon stopped before the delegation ended; `queued` while it waits for a worker slot. */
  status: DelegationStatus;
  error: string | null;
  detail: string | null;
  /** When it began waiting for a free worker slot (null: it never waited; absent from older daemons). */
  queued_at?: string | null;
  /** When it ended, for one whose worker started (null while it runs or waits, or when its end was never recorded; absent from older daemons). */
  ended_at?: string | null;
  /** The questions its worker asked (an edit, a command) and their answers, oldest first (absent from older daemons). */
  approvals?: ApprovalRecord[];
  /**
   * The question its start asked the user (its worker may change things) and the answer; null when nothing was asked,
   * absent in older records. A planner's call keeps it with its `tool_result` too.
   */
  approval?: ApprovalRecord | null;
  /**
   * The questions about its start asked before `approval`, oldest first: each answered, then asked again because the
   * worker's model changed while it waited (`superseded` says so). Empty or absent when it was asked once.
   */
  superseded_approvals?: ApprovalRecord[];
}

/** What a planner (or the user, with `/delegate`) handed to a worker; only the fields the editor shows. */
export interface HandoffEnvelope {
  id: string;
  reason: 'planner_delegate' | 'user_delegate';
  intent: string;
  source: { session_id: string; model: string; profile: { name: string; resolved_from: string } };
  /** `tier`: the tier asked for; `worker_tier`: the one the worker runs on (lower when the tier floor capped it;
   * null or absent in older records). */
  target: { session_id: string | null; tier: string; worker_tier?: string | null; profile: { name: string; resolved_from: string } };
  capability_scope: {
    tools: string[]; dropped_tools: string[]; approval: string; approval_required: boolean;
    /** Other tools the planner named that the worker did not get, with why (absent in older records). */
    withheld_tools?: Record<string, string>;
  };
  model_policy: { tier: string; profile_model: string | null; tiers: Record<string, string> };
  budget: { max_tokens: number | null; timeout_seconds: number; planner_session_cost_usd: Money; cost_today_usd: Money };
  input: { context: { mode: string; include?: unknown[] }; output_schema: unknown };
}

export interface NewSessionResult {
  session: Session;
}

export interface RouteDecidedParams {
  session_id: string;
  turn_id: string;
  model: string | null;
  summary: string | null;
  banners: string[];
  decision: RouteDecision | null;
}

export interface ToolActivity {
  id: string;
  name: string;
  input?: unknown;
  status: 'running' | 'done' | 'error';
  summary?: string;
  /** On a result: the question the call asked first and how it ended, as the session keeps it. */
  approval?: ApprovalRecord;
  /** On a `delegate` result: its questions asked before `approval` and superseded by it (asked again), oldest first. */
  superseded_approvals?: ApprovalRecord[];
  /** On a result the chat shows under the call (a command that ran): its text, exit status line first. */
  output?: string;
}

export interface ChatDeltaParams {
  session_id: string;
  turn_id: string | null;
  kind: 'text' | 'tool_call' | 'tool_result' | 'command_output' | 'notice';
  text?: string;
  tool?: ToolActivity;
}

/** `awaiting_approval`: it waited for a worker slot and now waits for the user to approve its start. */
export type DelegationStatus = 'queued' | 'awaiting_approval' | 'running' | 'completed' | 'failed' | 'cancelled';

/** Where a delegation waiting for a free worker slot stands (`max_concurrent_workers` reached). */
export interface QueuePlace {
  /** 1: the next to start. */
  position: number;
  /** Workers of the planner's turn running now. */
  running: number;
  /** How many may run at once. */
  limit: number;
}

/** `switchman/delegation`: a worker started, made progress or ended (one per `delegate` call or `/delegate`). */
export interface DelegationParams {
  phase: 'queued' | 'awaiting_approval' | 'started' | 'progress' | 'ended';
  /** The planner's session and turn (null when the user delegated with `/delegate`). */
  session_id: string;
  turn_id: string | null;
  tool_use_id: string;
  worker_session_id: string;
  worker_turn_id: string | null;
  tier: string;
  model: string | null;
  task: string;
  status: DelegationStatus;
  turns: number;
  llm_calls: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: Money;
  /** The part of `cost_usd` that is Switchman's estimate (calls cut short before the provider reported usage). */
  estimated_usd?: Money;
  /** Its wait while it waits; once started, its worker's run time (from its start); null once it ended never started. */
  elapsed_seconds: number | null;
  activity: string | null;
  error: string | null;
  detail: string | null;
  dropped_tools: string[];
  /** Who delegated: the planner's `delegate` call, or the user's `/delegate` (absent from older daemons). */
  source?: 'planner' | 'user';
  /** The tier the worker runs on once routed (`tier` is the one asked for). */
  worker_tier?: string | null;
  /** The planner's tier, when the tier floor is on. */
  tier_floor?: string | null;
  /** The tier floor lowered the tier asked for to `worker_tier`. */
  floor_applied?: boolean;
  /** What chose the worker's model when its tier did not (`rule: docs questions`), from `started` on. */
  routed_by?: string | null;
  /** Its place in line while `queued` (null otherwise; absent from older daemons). */
  queue?: QueuePlace | null;
  /** On the `progress` update of a worker's call that asked the user: the question and its answer as the worker's session keeps it. */
  approval?: ApprovalRecord | null;
}

/** `switchman/sessionChanged`: another editor window's daemon changed the workspace's current session. */
export interface SessionChangedParams {
  workspace: WorkspaceUri;
  session_id: string | null;
}

export interface StatusParams {
  workspace: WorkspaceUri;
  session_id: string | null;
  active_model: string | null;
  sticky_model: string | null;
  pending_swap: PendingSwap | null;
  turn_in_flight: boolean;
  banners: string[];
  cost_today_usd: Money;
  /** The part of `cost_today_usd` that is Switchman's estimate (calls cut short; absent from older daemons). */
  estimated_today_usd?: Money;
  config_errors: number;
  /** The agent profile in force and where it was chosen (absent from daemons without profiles). */
  profile?: ActiveProfile | null;
}

/** Where the profile in force was chosen: the session, the workspace's default, or the global default. */
export type ProfileSource = 'session' | 'workspace' | 'global';

export interface ActiveProfile {
  name: string;
  resolved_from: ProfileSource;
  /** The user's global default profile that bounds this workspace default (absent when it is not bounded, and from older daemons). */
  bounded_by?: string;
  /** With `bounded_by`: the tools the session is left, sorted. */
  tools?: string[];
  /** With `bounded_by`: the approval mode in force. */
  approval?: 'ask' | 'read_only';
  /** With `bounded_by`: the tools the profile has on its own but the bound takes away, sorted. */
  tools_left_out?: string[];
}

export interface ProfileInfo {
  name: string;
  description: string;
  source: 'builtin' | 'user' | 'workspace';
  tools: string[];
  model_policy: { model: string | null; tier: string | null; tiers?: Record<string, string>;
    /** Reasoning effort for its turns (`low`, `medium`, `high`), or null. */
    effort?: string | null };
  approval?: 'ask' | 'read_only';
  /** The profile in force as a workspace default bounded by this profile of the user's (`tools`, `approval`: what it is left); absent otherwise. */
  bounded_by?: string;
  /** With `bounded_by`: the tools the bound takes away, sorted. */
  tools_left_out?: string[];
}

/** `switchman/profiles` result. */
export interface ProfilesResult {
  profiles: ProfileInfo[];
  active: ActiveProfile;
}

/** `switchman/setProfile` result. */
export interface SetProfileResult {
  outcome: 'applied' | 'cleared' | 'unchanged';
  session_id: string;
  profile: ActiveProfile;
  message: string;
}

/** `switchman/approve` params (server → client request). */
export interface ApprovalRequest {
  id: string;
  workspace: string;
  session_id: string;
  turn_id: string;
  tool: string;
  tool_class: 'write' | 'execute';
  title: string;
  path?: string | null;
  uri?: string | null;
  original?: string | null;
  proposed?: string | null;
  diff?: string | null;
  command?: string | null;
  cwd?: string | null;
  is_worker?: boolean;
  /** For `delegate`: the worker's tier (after the tier floor), its task, and the write/execute tools it will have. */
  tier?: string | null;
  /** For `delegate`: the tier the planner asked for, when the tier floor lowered it to `tier`; else null. */
  requested_tier?: string | null;
  /** For `delegate`: the model the worker will run on (routed before asking); null when none could be named. */
  model?: string | null;
  /** For `delegate`: what chose `model` when its tier did not (`rule: docs`, a profile's model); else null. */
  routed_by?: string | null;
  task?: string | null;
  worker_tools?: string[] | null;
  /**
   * For `delegate`: why the user is asked again after answering (`the model changed from … to … while the question
   * waited`); null the first time, absent from older daemons.
   */
  asked_again?: string | null;
  /**
   * For `delegate`: the delegation's id (the planner's call's, a `/delegate`'s own), as its `switchman/delegation`
   * notifications have it: the card goes right above that delegation's card. Absent from older daemons.
   */
  tool_use_id?: string | null;
}

/** The answer to `switchman/approve`. */
export interface ApprovalAnswer {
  decision: 'allow_once' | 'allow_always' | 'deny';
  reason?: string;
  /** On a `deny`: the editor turned down what the user allowed (the change no longer fits the buffer). */
  refused_by?: 'editor';
}

/** `switchman/trust` result. */
export interface TrustResult {
  trusted: { workspace: string; tools: string[] }[];
  /** Why nothing may be listed: `trust.json` could not be read (or was started anew). */
  problem?: string;
}

/** `switchman/revokeTrust` result. */
export interface RevokeTrustResult {
  workspace: string;
  revoked: string[];
}

/** `switchman/applyCode` result: the code block was put into the file, or why not. */
export interface ApplyCodeResult {
  applied: boolean;
  decision: ApprovalAnswer['decision'];
  path: string;
  reason: string | null;
  /** The question asked and its answer, as the turn keeps it; null when nothing was asked. */
  approval?: ApprovalRecord | null;
  /** The file already had the code: nothing was asked nor changed (`applied` false, `reason` says so). */
  unchanged?: boolean;
}

/** An attachment of `switchman/chat`. */
export interface Attachment {
  kind: 'file' | 'selection';
  uri: string;
  text?: string;
  start_line?: number;
  end_line?: number;
}

/** The extension's settings (declared in package.json), read through a stubbable reader. */

export interface SettingsReader {
  get<T>(key: string, fallback: T): T;
}

export interface ServerSettings {
  serverCommand: string;
  serverArgs: string[];
  pythonPath: string;
  serverEnv: Record<string, string>;
  diagnosticsDebounceMs: number;
}

export interface ChatSettings {
  routePreview: boolean;
  previewDelayMs: number;
}

/** Settings whose change needs a new daemon process. */
export const RESTART_SETTINGS = [
  'switchman.serverCommand',
  'switchman.serverArgs',
  'switchman.pythonPath',
  'switchman.serverEnv',
  'switchman.diagnosticsDebounceMs',
];

export function readServerSettings(settings: SettingsReader): ServerSettings {
  return {
    serverCommand: settings.get('serverCommand', 'switchman').trim() || 'switchman',
    serverArgs: settings.get<string[]>('serverArgs', ['serve']),
    pythonPath: settings.get('pythonPath', '').trim(),
    serverEnv: stringValues(settings.get<Record<string, unknown>>('serverEnv', {})),
    diagnosticsDebounceMs: settings.get('diagnosticsDebounceMs', 150),
  };
}

export function readChatSettings(settings: SettingsReader): ChatSettings {
  return {
    routePreview: settings.get('chat.routePreview', true),
    previewDelayMs: Math.max(0, settings.get('chat.previewDelayMs', 250)),
  };
}

/** Whether the Sessions view lists worker sessions (delegated sub-tasks) under their planner. */
export function readShowWorkerSessions(settings: SettingsReader): boolean {
  return settings.get<boolean>('showWorkerSessions', false) === true;
}

function stringValues(record: Record<string, unknown>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(record ?? {})) {
    if (value !== null && value !== undefined) result[key] = String(value);
  }
  return result;
}

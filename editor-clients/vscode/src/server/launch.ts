/** How to start `switchman serve`: settings + environment in, a command line or a problem out. */

import * as path from 'node:path';
import type { ServerSettings } from './settings';

export interface LaunchPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Shown in messages: the command line as the user would type it. */
  display: string;
}

export interface LaunchProblem {
  /** What went wrong, in one sentence. */
  message: string;
  /** The setting to open to fix it. */
  setting: string;
}

export interface LaunchHost {
  env: Record<string, string | undefined>;
  homeDir: string;
  platform: NodeJS.Platform;
  isExecutable(file: string): boolean;
}

const PYTHON_MODULE_ARGS = ['-m', 'switchman.server.cli'];

export function planLaunch(settings: ServerSettings, host: LaunchHost): LaunchPlan | LaunchProblem {
  const env = launchEnv(settings.serverEnv, host);
  if (settings.pythonPath) {
    const python = expandHome(settings.pythonPath, host.homeDir);
    const found = findExecutable(python, env, host);
    if (!found) {
      return {
        message: `The Python interpreter "${settings.pythonPath}" set in switchman.pythonPath was not found.`,
        setting: 'switchman.pythonPath',
      };
    }
    return plan(found, [...PYTHON_MODULE_ARGS, ...settings.serverArgs], env);
  }
  const command = expandHome(settings.serverCommand, host.homeDir);
  const found = findExecutable(command, env, host);
  if (!found) {
    const where = isPath(command) ? 'was not found (or is not executable)' : 'was not found on PATH';
    return {
      message: `The Switchman daemon "${settings.serverCommand}" ${where}. `
        + 'Install Switchman from a clone of its repository (`make` there makes .venv/bin/switchman; it is '
        + 'not on PyPI, so `pip install switchman` would not get it), then set switchman.serverCommand to '
        + 'the full path of that switchman program, or switchman.pythonPath to that .venv/bin/python.',
      setting: 'switchman.serverCommand',
    };
  }
  return plan(found, settings.serverArgs, env);
}

export function isLaunchProblem(value: LaunchPlan | LaunchProblem): value is LaunchProblem {
  return 'setting' in value;
}

function plan(command: string, args: string[], env: Record<string, string>): LaunchPlan {
  return { command, args, env, display: [command, ...args].join(' ') };
}

/** VS Code's environment with `switchman.serverEnv` on top (`~` expanded in values). */
export function launchEnv(extra: Record<string, string>, host: LaunchHost): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(host.env)) {
    if (value !== undefined) env[key] = value;
  }
  for (const [key, value] of Object.entries(extra)) env[key] = expandHome(value, host.homeDir);
  return env;
}

export function expandHome(value: string, homeDir: string): string {
  if (value === '~') return homeDir;
  if (value.startsWith('~/') || value.startsWith('~\\')) return path.join(homeDir, value.slice(2));
  return value;
}

/** An absolute or relative path is checked as is; a bare name is looked up on PATH. */
export function findExecutable(command: string, env: Record<string, string>, host: LaunchHost): string | undefined {
  if (isPath(command)) {
    return host.isExecutable(command) ? command : undefined;
  }
  const separator = host.platform === 'win32' ? ';' : ':';
  const extensions = host.platform === 'win32' ? ['.exe', '.cmd', '.bat', ''] : [''];
  for (const dir of (env.PATH ?? env.Path ?? '').split(separator)) {
    if (!dir) continue;
    for (const extension of extensions) {
      const candidate = path.join(dir, command + extension);
      if (host.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

function isPath(command: string): boolean {
  return command.includes('/') || command.includes('\\');
}

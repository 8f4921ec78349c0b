/** Which files are Switchman configuration, and the document selector of the language client. */

import * as path from 'node:path';

export const CONFIG_DIR_ENV = 'SWITCHMAN_CONFIG_DIR';
export const CONFIG_FILES = ['routing.yaml', 'models.yaml', 'profiles.yaml'];
export const WORKSPACE_ROUTING_GLOB = '**/.switchman/routing.yaml';
export const WORKSPACE_PROFILES_GLOB = '**/.switchman/profiles.yaml';

export interface DocumentFilter {
  scheme: string;
  pattern?: string;
}

/** The user's config folder as the daemon computes it (platformdirs' user_config_dir). */
export function userConfigDir(env: Record<string, string | undefined>, homeDir: string, platform: NodeJS.Platform): string {
  const override = env[CONFIG_DIR_ENV];
  if (override) return override.startsWith('~') ? path.join(homeDir, override.slice(1)) : override;
  if (platform === 'darwin') return path.join(homeDir, 'Library', 'Application Support', 'switchman');
  if (platform === 'win32') return path.join(env.LOCALAPPDATA ?? path.join(homeDir, 'AppData', 'Local'), 'switchman');
  return path.join(env.XDG_CONFIG_HOME || path.join(homeDir, '.config'), 'switchman');
}

/** The user's routing.yaml, models.yaml and profiles.yaml, and any workspace's `.switchman/routing.yaml`
 * and `.switchman/profiles.yaml`. */
export function configDocumentSelector(configDir: string): DocumentFilter[] {
  const folder = configDir.split(path.sep).join('/');
  return [
    ...CONFIG_FILES.map((name) => ({ scheme: 'file', pattern: `${folder}/${name}` })),
    { scheme: 'file', pattern: WORKSPACE_ROUTING_GLOB },
    { scheme: 'file', pattern: WORKSPACE_PROFILES_GLOB },
  ];
}

/**
 * The language client's documents: every `file` document, of which `SharedDocuments` sends the daemon
 * the configuration files and the workspace's files (see sharedDocuments.ts).
 */
export function clientDocumentSelector(configDir: string): DocumentFilter[] {
  return [...configDocumentSelector(configDir), { scheme: 'file' }];
}

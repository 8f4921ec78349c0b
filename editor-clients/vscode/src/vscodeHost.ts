/** The VS Code implementations of the small interfaces in common/host.ts. */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import type { EditorContext } from './chat/attachments';
import type { Disposable, Folder, WorkspaceFolders } from './common/host';
import type { PickerEntry, PickerOptions, PickerUi } from './common/picker';
import type { LaunchHost } from './server/launch';
import type { SettingsReader } from './server/settings';
import type { StatusItem } from './status/statusBar';
import type { StatusView } from './status/statusText';

export function settingsReader(): SettingsReader {
  return { get: <T>(key: string, fallback: T) => vscode.workspace.getConfiguration('switchman').get<T>(key, fallback) };
}

export function launchHost(): LaunchHost {
  return {
    env: process.env,
    homeDir: os.homedir(),
    platform: process.platform,
    isExecutable(file) {
      try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    },
  };
}

function toFolder(folder: vscode.WorkspaceFolder): Folder {
  return { uri: folder.uri.toString(), name: folder.name };
}

export const vscodeFolders: WorkspaceFolders = {
  all: () => (vscode.workspace.workspaceFolders ?? []).map(toFolder),
  active() {
    const editor = vscode.window.activeTextEditor;
    const owner = editor ? vscode.workspace.getWorkspaceFolder(editor.document.uri) : undefined;
    const folder = owner ?? vscode.workspace.workspaceFolders?.[0];
    return folder ? toFolder(folder) : undefined;
  },
  onDidChange(listener): Disposable {
    return vscode.workspace.onDidChangeWorkspaceFolders(() => listener());
  },
};

/** A VS Code status bar item for one folder. */
export function createStatusItem(folder: Folder, index: number): StatusItem {
  const item = vscode.window.createStatusBarItem(`switchman.status.${index}`, vscode.StatusBarAlignment.Right, 100 - index);
  item.name = `Switchman (${folder.name})`;
  item.show();
  return statusItem(item);
}

/** The agent-profile item of a folder, next to its model item; shown once the daemon names a profile. */
export function createProfileItem(folder: Folder, index: number): StatusItem {
  // Right-aligned items with a higher priority sit further left: just before the model (100), after
  // the editor's own items (the language mode is 100.1).
  const item = vscode.window.createStatusBarItem(`switchman.profile.${index}`, vscode.StatusBarAlignment.Right, 100.05 - index);
  item.name = `Switchman profile (${folder.name})`;
  return statusItem(item);
}

function statusItem(item: vscode.StatusBarItem): StatusItem {
  return {
    update(view: StatusView, current: Folder) {
      if (!view.text) {
        item.hide();
        return;
      }
      item.text = view.text;
      item.tooltip = new vscode.MarkdownString(view.tooltip, true);
      item.backgroundColor = view.background ? new vscode.ThemeColor(`statusBarItem.${view.background}Background`) : undefined;
      item.command = { command: view.command, title: 'Switchman', arguments: [current.uri] };
      item.accessibilityInformation = { label: view.accessibilityLabel };
      item.show();
    },
    dispose: () => item.dispose(),
  };
}

/** The active text editor's file, text and selection (1-based lines), for chat attachments. */
export function activeEditor(): EditorContext | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== 'file') return undefined;
  const { selection, document } = editor;
  const context: EditorContext = { uri: document.uri.toString(), text: document.getText() };
  if (!selection.isEmpty) {
    const lastLine = selection.end.character === 0 && selection.end.line > selection.start.line
      ? selection.end.line - 1 : selection.end.line;
    context.selection = { text: document.getText(selection), startLine: selection.start.line + 1, endLine: lastLine + 1 };
  }
  return context;
}

type PickerItem = vscode.QuickPickItem & { entry: PickerEntry<unknown> };

function pickerItem(entry: PickerEntry<unknown>): PickerItem {
  if (entry.kind === 'separator') return { label: entry.label, kind: vscode.QuickPickItemKind.Separator, entry };
  return { label: entry.label, description: entry.description, detail: entry.detail, picked: entry.current, entry };
}

/** The model and profile pickers' QuickPick: shown busy at once, the current row active once loaded. */
async function showPicker<T>(options: PickerOptions, entries: Promise<PickerEntry<T>[]>): Promise<PickerEntry<T> | undefined> {
  const quickPick = vscode.window.createQuickPick<PickerItem>();
  quickPick.title = options.title;
  quickPick.placeholder = options.placeholder;
  quickPick.matchOnDescription = true;
  quickPick.matchOnDetail = options.matchOnDetail ?? false;
  quickPick.busy = true;
  quickPick.show();
  try {
    const items = (await entries).map(pickerItem);
    quickPick.items = items;
    quickPick.activeItems = items.filter((i) => i.picked);
    quickPick.busy = false;
    const choice = await new Promise<PickerItem | undefined>((resolve) => {
      quickPick.onDidAccept(() => resolve(quickPick.selectedItems[0]));
      quickPick.onDidHide(() => resolve(undefined));
    });
    return choice?.entry as PickerEntry<T> | undefined;
  } finally {
    quickPick.hide();
    quickPick.dispose();
  }
}

export const vscodePickerUi: PickerUi = {
  pick: showPicker,
  showError: (message) => void vscode.window.showErrorMessage(message),
  showInfo: (message) => void vscode.window.showInformationMessage(message),
  showStatus: (message) => void vscode.window.setStatusBarMessage(message, 5000),
  offer: async (message, action) => (await vscode.window.showInformationMessage(message, action)) === action,
};

/** Open a file at a place named in the chat (1-based line and column), e.g. a problem `/rules check` listed. */
export async function openLocation(path: string, line: number, column: number): Promise<void> {
  const at = new vscode.Position(line - 1, column - 1);
  try {
    await vscode.window.showTextDocument(vscode.Uri.file(path), { selection: new vscode.Range(at, at) });
  } catch (error) {
    void vscode.window.showErrorMessage(`Switchman: could not open ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

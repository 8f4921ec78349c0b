/** The model registry (`switchman/models`), cached for short names in the status bar. */

import { Emitter } from '../common/host';
import type { Disposable, SwitchmanConnection } from '../common/host';
import { modelIndex } from '../common/format';
import { Requests } from '../protocol/methods';
import { modelsParams } from '../protocol/params';
import type { ModelInfo, ModelsResult } from '../protocol/types';

export class ModelCatalog implements Disposable {
  private models = new Map<string, ModelInfo>();
  private readonly changed = new Emitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly connection: SwitchmanConnection) {}

  get index(): Map<string, ModelInfo> {
    return this.models;
  }

  /** Ask the daemon (for one workspace: its sticky model is part of the answer). */
  async fetch(workspace: string): Promise<ModelsResult> {
    const result = await this.connection.request<ModelsResult>(Requests.models, modelsParams(workspace));
    this.models = modelIndex(result.models);
    this.changed.fire();
    return result;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

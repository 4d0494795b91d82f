/**
 * Synthesizes a stage's stacks offline the way `sst deploy` does (SST's App in deploy mode, the
 * same addStacks as sst.config.ts), with a fixed account and region instead of AWS credentials.
 */
import { Aspects } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { App, getStack, use, type Stack } from "sst/constructs";
import { initProject, useProject } from "sst/project.js";
import { Api, Events, Monitoring, Storage, Web, addStacks } from "../../stacks/index.js";

export const ACCOUNT = "123456789012";
export const REGION = "eu-west-1";

export interface SynthOptions {
  /** Deploying-shell variables for this synth (restored afterwards). */
  env?: Record<string, string | undefined>;
  /** Run SST's deferred tasks (function bundling, the static site archive), as `sst deploy` does. */
  finish?: boolean;
  web?: boolean;
  /** Run cdk-nag's AwsSolutions rules over every stack while it synthesizes (their findings become annotations). */
  checks?: boolean;
}

export interface Synthesized {
  app: App;
  stacks: { storage: Stack; events: Stack; api: Stack; monitoring: Stack; web?: Stack };
  templates: { storage: Template; events: Template; api: Template; monitoring: Template; web?: Template };
  /** What each functional stack returned (its constructs). */
  outputs: { events: ReturnType<typeof Events>; api: ReturnType<typeof Api>; monitoring: ReturnType<typeof Monitoring> };
}

function withEnv<T>(env: Record<string, string | undefined>, run: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  apply(env);
  return run().finally(() => apply(saved));
}

export function synthStage(stage: string, options: SynthOptions = {}): Promise<Synthesized> {
  // A stage other than a dev one needs its own cursor key (stacks/stage.ts).
  return withEnv({ VANCETOPE_CURSOR_SECRET: "synth-cursor-key-".padEnd(40, "k"), ...options.env }, async () => {
    await initProject({ stage, region: REGION });
    const project = useProject();
    const app = new App({ mode: "deploy", stage, name: project.config.name, region: project.config.region, account: ACCOUNT });
    const web = options.web !== false;
    if (options.checks) Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
    addStacks(app, { web });
    if (options.finish) await app.finish();
    // getStack() reads SST's current app: take every template now, before another synth.
    const stacks = {
      storage: getStack(Storage),
      events: getStack(Events),
      api: getStack(Api),
      monitoring: getStack(Monitoring),
      ...(web ? { web: getStack(Web) } : {}),
    };
    return {
      app,
      stacks,
      templates: {
        storage: Template.fromStack(stacks.storage),
        events: Template.fromStack(stacks.events),
        api: Template.fromStack(stacks.api),
        monitoring: Template.fromStack(stacks.monitoring),
        ...(stacks.web ? { web: Template.fromStack(stacks.web) } : {}),
      },
      outputs: { events: use(Events), api: use(Api), monitoring: use(Monitoring) },
    };
  });
}

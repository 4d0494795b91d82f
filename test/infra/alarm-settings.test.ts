/** The alarm settings of a stage (docs/deploy.md, "Alarms"): defaults, limits, and clear refusals. */
import { describe, expect, it } from "vitest";
import { ALARM_THRESHOLDS, readAlarmSettings, type AlarmThresholdName } from "../../stacks/alarm-settings.js";
import { readStageConfig } from "../../stacks/stage.js";

const NAMES = Object.keys(ALARM_THRESHOLDS) as AlarmThresholdName[];

describe("alarm settings", () => {
  it("default to the stage's own topic, no subscriber and the documented thresholds", () => {
    expect(readAlarmSettings({})).toEqual({
      emails: [],
      thresholds: {
        dlqMessages: 1,
        workerErrors: 3,
        workerTimeouts: 1,
        failedFoldPercent: 20,
        gateRefusals: 10,
        fallbacks: 3,
        turnP99Ms: 3000,
        dynamoThrottles: 5,
        dynamoSystemErrors: 1,
        api5xx: 5,
      },
    });
  });

  it("are part of the stage config, so a bad one fails the deploy before anything is built", () => {
    expect(readStageConfig("team-a", { VANCETOPE_CURSOR_SECRET: "k".repeat(40), ALARM_TURN_P99_MS: "2000" }).alarms.thresholds.turnP99Ms).toBe(2000);
    expect(() => readStageConfig("team-a", { VANCETOPE_CURSOR_SECRET: "k".repeat(40), ALARM_TURN_P99_MS: "fast" })).toThrow("ALARM_TURN_P99_MS must be a whole number from 50 to 30000 (got 'fast')");
  });

  it.each(NAMES)("take %s at its lowest and highest value and refuse one past either", (name) => {
    const { env, min, max } = ALARM_THRESHOLDS[name];
    expect(readAlarmSettings({ [env]: String(min) }).thresholds[name]).toBe(min);
    expect(readAlarmSettings({ [env]: ` ${max} ` }).thresholds[name]).toBe(max);
    const message = `${env} must be a whole number from ${min} to ${max}`;
    expect(() => readAlarmSettings({ [env]: String(min - 1) })).toThrow(`${message} (got '${min - 1}')`);
    expect(() => readAlarmSettings({ [env]: String(max + 1) })).toThrow(`${message} (got '${max + 1}')`);
    expect(() => readAlarmSettings({ [env]: "2.5" })).toThrow(message);
    expect(() => readAlarmSettings({ [env]: "1e3" })).toThrow(message);
  });

  it("read an existing topic's ARN, and refuse anything else", () => {
    const arn = "arn:aws:sns:eu-west-1:123456789012:team-pager";
    expect(readAlarmSettings({ ALARM_TOPIC_ARN: ` ${arn} ` }).topicArn).toBe(arn);
    for (const bad of ["team-pager", "arn:aws:sqs:eu-west-1:123456789012:team-pager", "arn:aws:sns:eu-west-1:12345:team-pager"]) {
      expect(() => readAlarmSettings({ ALARM_TOPIC_ARN: bad })).toThrow(`ALARM_TOPIC_ARN must be an SNS topic ARN (got '${bad}')`);
    }
  });

  it("read the addresses to subscribe, naming the one that is not an address", () => {
    expect(readAlarmSettings({ ALARM_EMAIL: " ops@example.com,, oncall@example.org " }).emails).toEqual(["ops@example.com", "oncall@example.org"]);
    expect(() => readAlarmSettings({ ALARM_EMAIL: "ops@example.com,oncall" })).toThrow("ALARM_EMAIL must be comma-separated email addresses (got 'oncall')");
  });

  it("refuse addresses together with an existing topic: they would subscribe to a topic the stage does not own", () => {
    expect(() => readAlarmSettings({ ALARM_TOPIC_ARN: "arn:aws:sns:eu-west-1:123456789012:team-pager", ALARM_EMAIL: "ops@example.com" })).toThrow(
      "with ALARM_TOPIC_ARN, subscribe the addresses to that topic instead",
    );
  });
});

/** Which publisher may act for which tenant (core/domain/event-publishers.ts). */
import { describe, expect, it } from "vitest";
import { accountOfArn, accountPublishers, parsePublisherGrants, publisherAccounts } from "../../core/domain/event-publishers.js";

describe("parsePublisherGrants", () => {
  it("gathers one account's tenants from its pairs, and * for every tenant", () => {
    const grants = parsePublisherGrants(" 111111111111=team-a, 111111111111=team-b ,222222222222=*,222222222222=team-c");
    expect(grants).toEqual(new Map<string, Set<string> | "any">([["111111111111", new Set(["team-a", "team-b"])], ["222222222222", "any"]]));
    expect(publisherAccounts(grants)).toEqual(["111111111111", "222222222222"]);
    expect(parsePublisherGrants("")).toEqual(new Map());
  });

  it.each([
    ["111111111111", /not <12-digit account id>=<tenant or \*>/],
    ["12345=team-a", /not <12-digit account id>/],
    ["111111111111=a#b", /names no valid tenant id/],
    ["111111111111=", /names no valid tenant id/],
  ])("refuses %j, naming the variable", (spec, message) => {
    expect(() => parsePublisherGrants(spec, "VANCETOPE_EVENT_PUBLISHERS")).toThrow(message);
    expect(() => parsePublisherGrants(spec, "VANCETOPE_EVENT_PUBLISHERS")).toThrow(/^VANCETOPE_EVENT_PUBLISHERS: /);
  });
});

describe("accountPublishers", () => {
  const policy = accountPublishers(parsePublisherGrants("111111111111=team-a,222222222222=*"), "999999999999");

  it("lets a granted account act for its tenants only, a * account and the service's own for any", () => {
    expect(policy("111111111111", "team-a")).toBe(true);
    expect(policy("111111111111", "team-b")).toBe(false);
    expect(policy("222222222222", "team-b")).toBe(true);
    expect(policy("999999999999", "team-z")).toBe(true);
  });

  it("refuses unknown accounts and events without one", () => {
    expect(policy("333333333333", "team-a")).toBe(false);
    expect(policy(undefined, "team-a")).toBe(false);
    expect(accountPublishers(new Map(), undefined)(undefined, "team-a")).toBe(false);
  });
});

it("reads the account of a Lambda function's ARN", () => {
  expect(accountOfArn("arn:aws:lambda:eu-west-1:123456789012:function:fn")).toBe("123456789012");
  expect(accountOfArn("arn:aws-cn:lambda:cn-north-1:123456789012:function:fn:live")).toBe("123456789012");
  expect(accountOfArn(undefined)).toBeUndefined();
  expect(accountOfArn("not-an-arn")).toBeUndefined();
});

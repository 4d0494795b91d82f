/** `carriedUnits`: the must-keep units a text carries, as the quality gate reads them (core/domain/salient-units.ts). */
import { describe, expect, it } from "vitest";
import { carriedUnits } from "../../core/domain/salient-units.js";

describe("carriedUnits", () => {
  it("keeps the units the text carries, in their order, whatever their case or trailing punctuation", () => {
    const text = "We deploy to EU-WEST-1 on 3 May; the budget is $12,000. Ask Dana Reyes.";
    expect(carriedUnits(text, ["us-east-1", "eu-west-1", "$12,000", "Dana Reyes", "3 May."])).toEqual(["eu-west-1", "$12,000", "Dana Reyes", "3 May."]);
  });

  it("does not find a unit inside a longer word or number", () => {
    expect(carriedUnits("version 1200 of the runners", ["120", "runner", "1200"])).toEqual(["1200"]);
  });

  it("is empty for no units", () => {
    expect(carriedUnits("anything", [])).toEqual([]);
  });
});

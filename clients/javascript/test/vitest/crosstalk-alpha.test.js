import { crosstalkTests } from "./crosstalk.js";

crosstalkTests("alpha");

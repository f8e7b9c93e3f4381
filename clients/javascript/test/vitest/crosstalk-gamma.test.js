import { crosstalkTests } from "./crosstalk.js";

crosstalkTests("gamma");

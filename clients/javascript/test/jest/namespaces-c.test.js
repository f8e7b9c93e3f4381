// One of three files Jest runs at once in parallel workers; crosstalk.js says what they prove.
import { crosstalkSuite } from "./crosstalk.js";

crosstalkSuite("c", 540);

"""Money in minor units with a currency: exponents, exchange rates, money shown to people."""

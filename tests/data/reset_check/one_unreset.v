// Fixture of scripts/check_reset.py: exactly one register (mode_q) is assigned in an async-reset
// block without a reset value. The others are reset (count_q, also through a part select and a
// concatenation), live in a plain clocked block (mem_q, data_q) or are combinational (next_d).
module fixture_unreset (
  input clk_i,
  input rst_ni,
  input [1:0] sel_i,
  input [7:0] d_i
);
  reg [7:0] count_q;
  reg [3:0] hi_q;
  reg [3:0] lo_q;
  reg [1:0] mode_q;
  reg [7:0] data_q;
  reg [7:0] mem_q [0:3];
  reg [7:0] next_d;
  integer i;
  always @* begin
    next_d = count_q + 8'd1;
  end
  always @(posedge clk_i) begin
    mem_q[sel_i] <= d_i;
    data_q <= mem_q[0];
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q <= 8'd0;
      {hi_q, lo_q} <= 8'd0;
    end else begin
      if (sel_i[0]) begin
        case (sel_i)
          2'd1: begin
            count_q[3:0] <= d_i[3:0];
          end
          default: begin
            for (i = 0; i < 2; i = i + 1) begin
              mode_q[i] <= d_i[i];
            end
          end
        endcase
      end else if (sel_i[1]) begin
        {hi_q, lo_q} <= d_i;
      end else begin
        count_q <= (next_d <= 8'd3) ? next_d : 8'd0;  // `<=` inside an expression is a comparison
      end
    end
  end
endmodule
